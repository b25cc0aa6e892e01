/**
 * Asking Argo CD to refresh an ApplicationSet's stale Applications (`argocd.argoproj.io/refresh`
 * on each, then again in rounds while they stay stale) is a cluster write like any other: it goes
 * through act(), so the `refresh` permission is checked before anything is patched, and the
 * attempt is audited and told in the release thread. `freshness --refresh` and the Refresh and
 * approve button both come here.
 */
import { progressText } from '../src/kube/freshness.js';
import type { FreshnessProgress, FreshnessSnapshot, WaitFreshResult } from '../src/kube/freshness-reader.js';
import { roundsText } from '../src/kube/refresh-rounds.js';
import { freshnessRefreshRounds } from '../src/config/file.js';
import { applicationsAccess } from '../src/kube/write-access.js';
import { act, type Outcome } from './act.js';
import type { CommandContext } from './types.js';
import type { StageRef } from './where.js';

/** How a refresh ended, for a person: fresh after N rounds, or still stale, why it stopped, and what to do. */
export function refreshOutcome(where: string, result: Pick<WaitFreshResult, 'report' | 'timedOut' | 'gaveUp' | 'rounds'>): { fresh: boolean; headline: string; advice?: string } {
  const rounds = roundsText(result.rounds);
  if (result.report.stale.length === 0) return { fresh: true, headline: `${progressText(result.report)} after ${rounds}` };
  const stopped = result.timedOut ? `at the timeout, after ${rounds}` : `after ${rounds}`;
  const advice = result.gaveUp
    ? `Argo CD took every refresh but has not reconciled them since the latest step transition (argo-cd#29347); its periodic resync (every 2-3 min) will. Run \`/glidepath freshness ${where} --refresh\` again then, or check the Argo CD application controller if they stay stale.`
    : `Argo CD has not got to every refresh yet; run \`/glidepath freshness ${where} --refresh\` again in a few minutes, or with a longer \`--timeout\`.`;
  return { fresh: false, headline: `${progressText(result.report)} ${stopped}; still stale: ${result.report.stale.length}`, advice };
}

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

/** The refresh and its wait, through act(); `waited` is there when the refresh was sent. */
export async function refreshApplications(ctx: CommandContext, request: RefreshRequest): Promise<{ outcome: Outcome<undefined>; waited?: WaitFreshResult }> {
  const { cluster, namespace, name } = request.appSet;
  const target = `${cluster}/${namespace}/${name}`;
  let waited: WaitFreshResult | undefined;
  const outcome = await act<undefined>(ctx, {
    action: 'refresh',
    target,
    where: request.where,
    ...(request.releaseId ? { releaseId: request.releaseId } : {}),
    describe: `refresh ${request.snapshot.report.stale.length} stale Applications of ${target}`,
    // The children are Applications in the ApplicationSet's namespace.
    writes: applicationsAccess(namespace),
    run: async (as) => {
      await request.onAllowed?.();
      const result = await ctx.kube.refreshAndWait(cluster, namespace, request.snapshot, {
        timeoutMs: request.timeoutMs,
        rounds: freshnessRefreshRounds(ctx.config),
        ...(request.now ? { now: request.now } : {}),
        ...(request.onProgress ? { onProgress: request.onProgress } : {}),
      }, as);
      waited = result;
      const said = refreshOutcome(target, result);
      return { kind: 'done', summary: `refreshed ${result.refreshed.requested.length} Applications of ${target}; ${said.headline}`, after: { refreshed: result.refreshed.requested, stale: result.report.stale.map((c) => c.name) } };
    },
  });
  return { outcome, ...(waited ? { waited } : {}) };
}
