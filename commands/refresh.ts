/**
 * Asking Argo CD to refresh an ApplicationSet's stale Applications is a cluster write like any
 * other: a request to the engine (src/actions/), so the `refresh` permission is checked before
 * anything is patched, and the attempt is audited and told in the release thread. `freshness
 * --refresh` and the Refresh and approve button both come here.
 */
import type { FreshnessProgress, FreshnessSnapshot, WaitFreshResult } from '../src/kube/freshness-reader.js';
import { applicationsRefresh } from '../src/actions/intents.js';
import { act, type Outcome } from './act.js';
import type { CommandContext } from './types.js';
import type { StageRef } from './where.js';

export { refreshOutcome } from '../src/actions/intents.js';

export interface RefreshRequest {
  /** The configured stage whose `refresh` permission applies. */
  where: StageRef;
  appSet: { cluster: string; namespace: string; name: string };
  /** What checkFreshness read just before: its stale children are the ones refreshed. */
  snapshot: FreshnessSnapshot;
  releaseId?: string;
  timeoutMs: number;
  /** The clock freshness is judged by (Date.now unless given). */
  now?: () => number;
  /** Once allowed, before the first patch (the progress message, say). */
  onAllowed?: () => Promise<void>;
  onProgress?: (progress: FreshnessProgress) => void;
}

/** The refresh and its wait, through the engine; `waited` is there when the refresh was sent. */
export async function refreshApplications(ctx: CommandContext, request: RefreshRequest): Promise<{ outcome: Outcome<undefined>; waited?: WaitFreshResult }> {
  let waited: WaitFreshResult | undefined;
  const { where, releaseId, ...wanted } = request;
  const intent = applicationsRefresh(ctx, { ...wanted, onWaited: (w) => (waited = w) });
  const outcome = await act(ctx, { intent, where, ...(releaseId ? { releaseId } : {}) });
  return { outcome, ...(waited ? { waited } : {}) };
}
