/**
 * The permissions each action's writes need, as SubjectAccessReview attributes: what is asked of
 * the cluster for the person before anything is sent (`authorization: kubernetes | both`). Each
 * list is exactly the writes the operation in this folder makes (verbs.ts declares them too).
 */
import type { AccessAttributes } from './impersonation.js';

/** Approve a canary step: clear the pause on the status subresource, then spec.paused=false (rollout-operations.ts). */
export function approveCanaryAccess(namespace: string, name: string): AccessAttributes[] {
  return [
    { verb: 'patch', group: 'argoproj.io', resource: 'rollouts', subresource: 'status', namespace, name },
    { verb: 'patch', group: 'argoproj.io', resource: 'rollouts', namespace, name },
  ];
}

/** Abort and retry: status.abort on the status subresource. */
export function rolloutStatusAccess(namespace: string, name: string): AccessAttributes[] {
  return [{ verb: 'patch', group: 'argoproj.io', resource: 'rollouts', subresource: 'status', namespace, name }];
}

/**
 * A RollingSync step (operation.sync) and a refresh (the refresh annotation) patch Applications
 * of the ApplicationSet's namespace; which ones is known only on fresh state, so the review asks
 * for the namespace.
 */
export function applicationsAccess(namespace: string): AccessAttributes[] {
  return [{ verb: 'patch', group: 'argoproj.io', resource: 'applications', namespace }];
}

/** A Kargo promote: the Promotion, and the custom verb Kargo's webhook checks on the Stage. */
export function kargoPromoteAccess(project: string, stage: string): AccessAttributes[] {
  return [
    { verb: 'create', group: 'kargo.akuity.io', resource: 'promotions', namespace: project },
    { verb: 'promote', group: 'kargo.akuity.io', resource: 'stages', namespace: project, name: stage },
  ];
}
