/**
 * Glidepath's own actions as the reducer reads them (pure): each named by what it acted on (the
 * pod hash and step), so the thread tells a resume or abort done through Glidepath from one made
 * with kubectl or the Argo CD UI. The worker reads them from Redis (store/own-actions.ts) and
 * hands them to the reducer in its context; commands name an action with the same keys.
 */
export type OwnActionKind = 'resume' | 'abort';

export interface OwnAction {
  /** `resume:<podHash>:<stepIndex|manual>` or `abort:<podHash|*>`. */
  key: string;
  /** The Slack user who acted. */
  user: string;
}

/** The key of resuming the pause at `step` (undefined: a manual pause) of the pod hash. */
export function resumeActionKey(podHash: string | undefined, step: number | undefined): string {
  return `resume:${podHash ?? '*'}:${step ?? 'manual'}`;
}

/** The key of aborting the pod hash (undefined: whatever the Rollout runs). */
export function abortActionKey(podHash: string | undefined): string {
  return `abort:${podHash ?? '*'}`;
}

/** The Glidepath action among `actions` matching `key` (an action named with `*` matches any pod hash). */
export function findOwnAction(actions: readonly OwnAction[] | undefined, key: string): OwnAction | undefined {
  const [kind, , ...rest] = key.split(':');
  const wildcard = [kind, '*', ...rest].join(':');
  return actions?.find((a) => a.key === key || a.key === wildcard);
}
