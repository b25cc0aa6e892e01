/**
 * The gates an action passes, in order (docs/actions.md): permission, then freshness, then
 * approvals. Each answers with a decision as a value; the engine stops at the first that holds the
 * action and audits every decision made. Freeze windows (issue #23 item 5) go between permission
 * and freshness; `approvalsGate` is the stage's quorum (quorum.ts).
 */
import type { FreshnessSnapshot } from '../kube/freshness-reader.js';
import { staleForStep } from '../kube/rolling-sync.js';
import type { AccessAttributes, KubeIdentity } from '../kube/impersonation.js';
import { authorizationOf, clusterAllows, type ClusterDecision } from '../policy/cluster-authorization.js';
import { authorize, type ClusterAction } from '../policy/permissions.js';
import { quorumGate, type ApprovalsAnswer } from './quorum.js';
import type { ActionReads } from './reads.js';
import { rejectedState } from './rejections.js';
import type { ActionContext, GateDecision, Intent, StageRef } from './types.js';

export type { ApprovalsAnswer } from './quorum.js';

export interface PermissionAnswer {
  decision: Extract<GateDecision, { gate: 'permission' }>;
  /** The identity the write is sent as (undefined: Glidepath's own service account). */
  sentAs?: KubeIdentity;
  /** Why the cluster could not be asked, when it could not. */
  error?: unknown;
}

/**
 * One interaction's SubjectAccessReviews, asked once: a Refresh-and-approve asks for the same
 * writes three times (the check before the refresh, the refresh, the approval).
 */
const reviewsOf = new WeakMap<object, Map<string, Promise<ClusterDecision>>>();

function clusterDecision(ctx: ActionContext, cluster: string, writes: readonly AccessAttributes[]): Promise<ClusterDecision> {
  let reviews = reviewsOf.get(ctx);
  if (!reviews) reviewsOf.set(ctx, (reviews = new Map()));
  const key = JSON.stringify([cluster, ctx.user.id, writes]);
  let decision = reviews.get(key);
  if (!decision) {
    const reviewer = { reviewAccess: (c: string, identity: KubeIdentity, access: AccessAttributes) => ctx.clusters.api(c).reviewAccess(identity, access) };
    decision = clusterAllows(reviewer, ctx.identities, cluster, ctx.user.id, writes);
    // A review that could not be asked is asked again next time.
    decision.catch(() => reviews.delete(key));
    reviews.set(key, decision);
  }
  return decision;
}

/**
 * Who may: the config's permissions, the cluster's RBAC for the person's Kubernetes identity, or
 * both (each must allow), per the cluster's `authorization`. A cluster that cannot be asked holds
 * the action (nothing is sent), as a decision that says it failed.
 */
export async function permissionGate(ctx: ActionContext, request: { action: ClusterAction; where: StageRef; writes: readonly AccessAttributes[] }): Promise<PermissionAnswer> {
  const { pipeline, stage } = request.where;
  const mode = authorizationOf(ctx.config, stage.cluster);
  const byConfig = mode === 'kubernetes' ? undefined : await authorize(ctx.config, { pipeline: pipeline.name, stage: stage.name }, request.action, ctx.user.id, ctx.groups);
  if (byConfig && !byConfig.allowed) return { decision: { gate: 'permission', allowed: false, reason: byConfig.reason } };
  if (mode === 'config') return { decision: { gate: 'permission', allowed: true, via: byConfig!.via } };
  let byCluster: ClusterDecision;
  try {
    byCluster = await clusterDecision(ctx, stage.cluster, request.writes);
  } catch (err) {
    const why = (err as Error).message;
    return { decision: { gate: 'permission', allowed: false, failed: true, reason: `Glidepath could not ask cluster ${stage.cluster} whether you may (${why}); nothing was sent` }, error: err };
  }
  const sentAs = byCluster.identity ? { sentAs: byCluster.identity } : {};
  if (!byCluster.allowed) return { decision: { gate: 'permission', allowed: false, reason: byCluster.reason }, ...sentAs };
  const via = `the Kubernetes RBAC of ${stage.cluster} for ${byCluster.identity.user} (mapped by ${byCluster.via === 'table' ? 'identities.users' : 'Slack profile email'})`;
  return { decision: { gate: 'permission', allowed: true, via: byConfig ? `${byConfig.via} and ${via}` : via }, ...sentAs };
}

/**
 * A RollingSync step only on fresh state: the children of this step and every earlier one must
 * have been reconciled since the latest step transition (docs/freshness.md). The snapshot read
 * here (the action's one read, which the freeze gate may have made) is the one the write is judged and sent on. A step that cannot be judged (no RollingSync,
 * no such step) passes here and is refused by the write, with its own words.
 */
export async function freshnessGate(intent: Intent, reads: ActionReads): Promise<{ decision?: Extract<GateDecision, { gate: 'freshness' }>; snapshot?: FreshnessSnapshot }> {
  const wanted = intent.freshness;
  if (!wanted) return {};
  const snapshot = await reads.freshness(wanted.namespace, wanted.appSet);
  const stale = staleForStep(snapshot, wanted.step);
  if (stale.length === 0) return { snapshot, decision: { gate: 'freshness', allowed: true, checked: snapshot.children.length } };
  return { snapshot, decision: { gate: 'freshness', allowed: false, reason: `${stale.length} Applications are not fresh`, stale: stale.map((s) => s.name) } };
}

/**
 * Quorum (quorum.ts): an approve (or a Kargo promote, with `approvals`) waits for the stage's
 * required number of different people who count, each approving the same state; the one who
 * meets it lets the action through.
 */
export function approvalsGate(ctx: ActionContext, intent: Intent, where: StageRef, releaseId?: string): Promise<ApprovalsAnswer> {
  return quorumGate(ctx, intent, where, releaseId);
}

/**
 * A standing rejection of the state an approval acts on (rejections.ts): the approval is not held
 * (the person approving decides), but its decision names whom it overrides, and `lift` clears it
 * once the write went through. A rejection itself is never judged here.
 */
export async function rejectionGate(ctx: ActionContext, intent: Intent): Promise<{ decision: Extract<GateDecision, { gate: 'rejection' }>; lift(by: string): Promise<void> } | undefined> {
  const state = rejectedState(intent);
  if (!ctx.rejections || intent.audited === 'reject' || state === undefined) return undefined;
  const standing = await ctx.rejections.standing(state);
  if (!standing) return undefined;
  const rejections = ctx.rejections;
  return { decision: { gate: 'rejection', allowed: true, overrides: { by: standing.by, reason: standing.reason, at: standing.at } }, lift: (by) => rejections.overridden(state, standing, by) };
}
