/**
 * A step stage's last judgement (derive.ts), reused while nothing it reads has changed. A child's
 * fact that arrives before its ApplicationSet is routed to every step stage, and the batch derives
 * the whole record once per route: without this, every step stage of thousands of children is
 * judged again after each route, though only the routed stage changed.
 *
 * The memo is taken after the stage was judged, and holds everything that judgement reads: the
 * stage's targets (each key and its object, which the reducer replaces, never edits), its pending
 * list, latch and row, and from outside the stage the fact's time, the pipeline, the
 * ApplicationSet state, the release's revision and id source, and the target index's lists. When
 * all of them are the same objects again, judging once more would change nothing (the judgement
 * only latches what is done, drops non-members, and recomputes status, pending and row from these
 * inputs), so it is not redone. A judgement that dropped targets is not memoized: the stage it
 * leaves is judged again once, as it would be. The replies stay the derivation's: the targets that
 * may have a notice due are listed, and their notices asked again.
 */
import type { ReduceContext } from './context.js';
import type { AppSetState, StepProgress } from './appset-record.js';
import type { ReleaseRecord, StageState, StageStatus, TargetState } from './record.js';

interface StageMemo {
  now: number;
  ctx: Pick<ReduceContext, 'pipeline' | 'targetReleases' | 'unhealthyGraceMs' | 'hookPinnedAfterMs'>;
  known: readonly string[] | undefined;
  appSet: AppSetState | undefined;
  idSource: ReleaseRecord['idSource'];
  revision: string | undefined;
  releaseId: string;
  movedFrom: ReleaseRecord['movedFrom'];
  keys: readonly string[];
  values: readonly TargetState[];
  pending: readonly string[];
  healthyAt: number | undefined;
  progress: StepProgress | undefined;
  status: StageStatus;
  /** stageDone of the judged stage. */
  done: boolean;
  /** Keys of the targets that may have a notice due (in key order). */
  noticing: readonly string[];
}

export interface ReusedJudgement {
  status: StageStatus;
  done: boolean;
  noticing: readonly string[];
}

const memos = new WeakMap<StageState, StageMemo>();

/** What the stage's memo says, when every input of its judgement is the one it was judged with. */
export function reusableJudgement(record: ReleaseRecord, stage: StageState, keys: readonly string[], appSetKey: string | undefined, now: number, ctx: ReduceContext): ReusedJudgement | undefined {
  const memo = memos.get(stage);
  if (memo === undefined) return undefined;
  if (memo.now !== now || memo.ctx.pipeline !== ctx.pipeline || memo.ctx.targetReleases !== ctx.targetReleases) return undefined;
  if (memo.ctx.unhealthyGraceMs !== ctx.unhealthyGraceMs || memo.ctx.hookPinnedAfterMs !== ctx.hookPinnedAfterMs) return undefined;
  if (memo.known !== ctx.knownTargets?.[stage.name]) return undefined;
  if (memo.appSet !== (appSetKey !== undefined ? record.appSets?.[appSetKey] : undefined)) return undefined;
  if (memo.idSource !== record.idSource || memo.revision !== record.revision || memo.releaseId !== record.releaseId || memo.movedFrom !== record.movedFrom) return undefined;
  if (memo.pending !== stage.pending || memo.healthyAt !== stage.healthyAt || stage.otherReleases !== undefined) return undefined;
  // The out-of-order rule (appset-order.ts) marks the row after the judgement; a marked row is judged afresh.
  const progress = stage.stepProgress;
  if (memo.progress !== progress || progress?.outOfOrder !== undefined || progress?.unconfirmed !== undefined) return undefined;
  if (memo.keys.length !== keys.length) return undefined;
  const targets = stage.targets;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== memo.keys[i] || targets[key] !== memo.values[i]) return undefined;
  }
  return { status: memo.status, done: memo.done, noticing: memo.noticing };
}

/** Keeps the stage's judgement just made; `keys` are its targets' keys after it. */
export function rememberJudgement(
  record: ReleaseRecord,
  stage: StageState,
  keys: readonly string[],
  appSetKey: string | undefined,
  now: number,
  ctx: ReduceContext,
  judged: { done: boolean; noticing: readonly string[] },
): void {
  const targets = stage.targets;
  memos.set(stage, {
    now,
    ctx: { pipeline: ctx.pipeline, targetReleases: ctx.targetReleases, unhealthyGraceMs: ctx.unhealthyGraceMs, hookPinnedAfterMs: ctx.hookPinnedAfterMs },
    known: ctx.knownTargets?.[stage.name],
    appSet: appSetKey !== undefined ? record.appSets?.[appSetKey] : undefined,
    idSource: record.idSource,
    revision: record.revision,
    releaseId: record.releaseId,
    movedFrom: record.movedFrom,
    keys,
    values: keys.map((k) => targets[k] as TargetState),
    pending: stage.pending,
    healthyAt: stage.healthyAt,
    progress: stage.stepProgress,
    status: stage.status,
    done: judged.done,
    noticing: judged.noticing,
  });
}

/** The stage's memo no longer holds (it was judged again and that judgement is not kept). */
export function forgetJudgement(stage: StageState): void {
  memos.delete(stage);
}
