/**
 * Derived state: stage rows, the "ever healthy" latch, the release status, and the replies a
 * person needs. Replies are keyed notices, so however often or in whatever order facts arrive,
 * each condition is announced once.
 */
import type { TargetRef } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import { hasNotice, noticeReply } from './notices.js';
import { abortedBy, pausedKey, pausedReply, waitsForApproval } from './pause-end.js';
import { judgeStepStage, notReachedHere, ownRevisions } from './derive-appset.js';
import { adoptKnownAppSets } from './appset-known.js';
import { placeListedChildren } from './reduce-appset.js';
import { appSetOrderFailures } from './appset-order.js';
import { kargoNotices, promotedFreight } from './kargo-derive.js';
import { recheckEffect } from './recheck.js';
import { activeTargets } from '../record/stage-targets.js';
import { mixedStageKey, stagePending } from './mixed-stage.js';
import type { Effect, ReleaseRecord, ReleaseStatus, ReplyDetail, ReplyKind, StageState, StageStatus, TargetState } from '../record/record.js';
import { putTarget, targetKeys } from '../record/target-writes.js';
import { stageTally } from '../record/stage-tally.js';

/**
 * The keys of a stage's targets, listed once per stage and derivation and shared by its passes
 * (a key a pass finds gone was dropped by an earlier one). A step stage of an ApplicationSet
 * holds thousands of targets, and listing an object that large costs far more than reading it.
 */
type TargetKeys = readonly string[];

/**
 * The stage's status from its targets: the targets still on this release, or all of them when
 * every one moved on to a newer release (the stage keeps the state it was last seen in). Counted
 * from the targets written since the last derivation (stage-tally.ts), not from all of them.
 */
function stageStatus(stage: StageState, keys: TargetKeys): StageStatus {
  const { active, all } = stageTally(stage.targets, keys);
  const targets = active.count > 0 ? active : all;
  if (targets.count === 0) return 'Waiting';
  const trouble = targets.trouble();
  if (trouble) return trouble;
  if ((stage.pending.length === 0 || active.count === 0) && targets.allHealthy) return 'Healthy';
  return 'Progressing';
}

/** Stall eligibility: the release is expected to make progress on its own. */
export function expectsProgress(status: ReleaseStatus): boolean {
  return status === 'Announced' || status === 'InProgress' || status === 'Paused';
}

/**
 * A stage is done with a release when it has been healthy for it, every target it knows has
 * reported the release since, and every target it has was healthy at the release at least once.
 * The stage's latch alone is not enough: a target heard only after the latch (a Rollout the stage
 * had not seen yet, a child that joined a step) is still to start, and the release is not done.
 * A target without a latch of its own that was last heard before the stage's latch was there, and
 * Healthy, when the stage latched (records saved before targets had latches).
 */
export function stageDone(stage: StageState, keys: TargetKeys = targetKeys(stage.targets)): boolean {
  const latched = stage.healthyAt;
  if (latched === undefined || stage.pending.length > 0) return false;
  for (const key of keys) {
    const t = stage.targets[key];
    if (t === undefined || t.supersededBy !== undefined) continue;
    // A Kargo Stage is done when its promotion was judged done (kargoNotices sets doneAt).
    if (t.kargo !== undefined && t.kargo.doneAt === undefined) return false;
    if (t.healthyAt === undefined && t.lastHeardAt > latched) return false;
  }
  return true;
}

/** Each target's own latch: Healthy at this release at least once (step stages judge theirs in derive-appset.ts). */
function latchTargets(stage: StageState, keys: TargetKeys, now: number): void {
  const targets = stage.targets;
  for (const key of keys) {
    const t = targets[key];
    if (t === undefined) continue;
    if (t.supersededBy === undefined && t.phase === 'Healthy' && t.healthyAt === undefined) putTarget(targets, key, { ...t, healthyAt: now });
  }
}

function releaseStatus(record: ReleaseRecord, keysOf: ReadonlyMap<StageState, TargetKeys>): ReleaseStatus {
  const keys = (stage: StageState): TargetKeys => keysOf.get(stage) ?? targetKeys(stage.targets);
  if (record.stages.every((stage) => stageDone(stage, keys(stage)))) return 'Complete';
  let targets = 0;
  let allSuperseded = true;
  for (const stage of record.stages) {
    for (const key of keys(stage)) {
      const t = stage.targets[key];
      if (t === undefined) continue;
      targets += 1;
      if (t.supersededBy === undefined) {
        allSuperseded = false;
        break;
      }
    }
  }
  if (targets > 0 && allSuperseded) return 'Superseded';
  const statuses = record.stages.map((s) => s.status);
  if (statuses.includes('Aborted')) return 'Aborted';
  if (statuses.includes('Degraded')) return 'Failed';
  if (statuses.includes('Paused')) return 'Paused';
  if (targets === 0) return 'Announced';
  return 'InProgress';
}

export { awaitsPerson, noticeReply, type ReplyEffect } from './notices.js';

export class Notices {
  readonly effects: Effect[] = [];
  constructor(private readonly record: ReleaseRecord) {}

  /** Whether the reply keyed `key` was announced already: a caller may then skip building it. */
  has(key: string): boolean {
    return hasNotice(this.record, key);
  }

  reply(key: string, kind: ReplyKind, detail: ReplyDetail, stage?: string, target?: TargetRef): void {
    const effect = noticeReply(this.record, key, kind, detail, stage, target);
    if (effect) this.effects.push(effect);
  }

  /** Asks to be reduced again at `at`, when a grace ends that no fact may tell (src/releases/reduce/recheck.ts). */
  recheckAt(at: number): void {
    const effect = recheckEffect(at);
    if (!this.effects.some((e) => e.id === effect.id)) this.effects.push(effect);
  }
}

function refKey(ref: TargetRef): string {
  return `${ref.cluster}/${ref.namespace}/${ref.name}`;
}

/**
 * Whether a target can have a notice due (targetNotices): most of a step stage's thousands of
 * targets are Healthy or Progressing with nothing failed, and are passed over without building
 * the reply's key or detail.
 */
function mayNotice(t: TargetState): boolean {
  if (t.supersededBy !== undefined) return false;
  if (t.aborted || t.phase === 'Degraded' || t.phase === 'Unknown' || waitsForApproval(t)) return true;
  if (t.analysis && (t.analysis.status === 'Failed' || t.analysis.status === 'Error')) return true;
  const phase = t.sync?.phase;
  return phase === 'Failed' || phase === 'Error' || phase === 'Running';
}

/**
 * A target's notices; the caller has checked mayNotice. `stepStage`: the stage is an ApplicationSet
 * step, where a child it has not reached has the previous revision's health (notReachedHere).
 */
function targetNotices(notices: Notices, stage: StageState, t: TargetState, now: number, ctx: ReduceContext, stepStage = false): void {
  const base = (): ReplyDetail => ({ generation: t.generation, uid: t.uid, podHash: t.podHash, message: t.message });
  if (t.aborted) {
    notices.reply(`aborted:${refKey(t.ref)}:${t.podHash ?? ''}`, 'aborted', { ...base(), ...abortedBy(t, ctx) }, stage.name, t.ref);
  } else if (waitsForApproval(t)) {
    // Every fact of a release derives each paused target again: an announced pause builds no reply.
    if (!notices.has(pausedKey(t))) {
      const paused = pausedReply(stage.name, t);
      notices.reply(paused.id, 'paused', paused.detail, stage.name, t.ref);
    }
  } else if ((t.phase === 'Degraded' || t.phase === 'Unknown') && !(stepStage && notReachedHere(t))) {
    // Before the stage was healthy a failure needs a person at once; afterwards a short blip
    // (a pod restarting under autoscaling) is only reported if it lasts.
    const lasting = stage.healthyAt === undefined ? t.phase === 'Degraded' : now - t.phaseSince >= ctx.unhealthyGraceMs;
    // A child of an ApplicationSet step is Degraded once per revision it runs: a flap (Degraded, Progressing, Degraded) is one condition.
    const condition = stage.stepProgress && t.ref.kind === 'Application' ? `at:${ownRevisions(t).join(',')}` : String(t.phaseSince);
    if (lasting) notices.reply(`degraded:${refKey(t.ref)}:${t.podHash ?? ''}:${condition}`, 'degraded', base(), stage.name, t.ref);
    // When the grace ends the reply is due even if no fact comes to say so (a steady Degraded sends none).
    else if (stage.healthyAt !== undefined) notices.recheckAt(t.phaseSince + ctx.unhealthyGraceMs);
  }
  if (t.analysis && (t.analysis.status === 'Failed' || t.analysis.status === 'Error')) {
    notices.reply(
      `analysis-failed:${refKey(t.ref)}:${t.analysis.name}`,
      'analysis-failed',
      { ...base(), message: t.analysis.message ?? `analysis ${t.analysis.name} ${t.analysis.status}`, ...(t.analysis.metrics ? { metrics: t.analysis.metrics } : {}) },
      stage.name,
      t.ref,
    );
  }
  const sync = t.sync;
  if (sync && (sync.phase === 'Failed' || sync.phase === 'Error')) {
    notices.reply(
      `sync-failed:${t.application ?? refKey(t.ref)}:${sync.finishedAt ?? sync.startedAt ?? ''}`,
      'sync-failed',
      { message: sync.message, revision: sync.revision, retryCount: sync.retryCount, finishedAt: sync.finishedAt },
      stage.name,
      t.ref,
    );
  }
  if (sync && sync.phase === 'Running' && (sync.retryCount ?? 0) > 0) {
    // Argo CD reports Failed only after its last retry, minutes later: say so at each failed attempt.
    notices.reply(
      `sync-retrying:${t.application ?? refKey(t.ref)}:${sync.startedAt ?? ''}:${sync.retryCount}`,
      'sync-retrying',
      { message: sync.message, revision: sync.revision, retryCount: sync.retryCount, retryLimit: sync.retryLimit },
      stage.name,
      t.ref,
    );
  }
  if (sync && sync.phase === 'Running' && sync.startedAt) {
    const runningFor = now - Date.parse(sync.startedAt);
    const rolloutPaused = (): boolean => activeTargets(stage).some((o) => o.ref.kind === 'Rollout' && o.phase === 'Paused');
    if (runningFor >= ctx.hookPinnedAfterMs && sync.runningHooks.length > 0 && rolloutPaused()) {
      notices.reply(
        `hook-pinned:${t.application ?? refKey(t.ref)}:${sync.startedAt}`,
        'hook-pinned',
        { message: `waiting on ${sync.runningHooks.join(', ')}`, revision: sync.revision },
        stage.name,
        t.ref,
      );
    }
  }
}

/** Recomputes everything derived and returns the replies that became due. */
export function evaluate(record: ReleaseRecord, now: number, ctx: ReduceContext): Effect[] {
  const notices = new Notices(record);
  // Step membership known beside the record (heard before this release opened, or since).
  adoptKnownAppSets(record, ctx.pipeline, ctx);
  placeListedChildren(record, ctx.pipeline);
  const keysOf = new Map<StageState, TargetKeys>();
  for (const stage of record.stages) {
    // A known target running another app's release is not pending for this one (mixed-stage.ts).
    stage.pending = stagePending(record, stage, ctx);
    if (stage.otherReleases) notices.reply(mixedStageKey(stage.name), 'mixed-stage', { mixed: { ...stage.otherReleases, ...selectorOf(ctx, stage.name) } }, stage.name);
    const keys = targetKeys(stage.targets);
    keysOf.set(stage, keys);
    stage.status = stageStatus(stage, keys);
    // A child of an ApplicationSet step that this release has not reached is in no trouble of this release (derive-appset.ts).
    const stepStage = ctx.pipeline.stages.some((s) => s.name === stage.name && s.applicationSet);
    if (stepStage) judgeStepStage(record, stage, ctx.pipeline, now, keys);
    else latchTargets(stage, keys, now);
    if (stage.status === 'Healthy' && stage.healthyAt === undefined) {
      stage.healthyAt = now;
      // Promote is offered only where the next stage is a Kargo Stage: nothing else is promoted by a click.
      const at = ctx.pipeline.stages.findIndex((s) => s.name === stage.name);
      const next = at >= 0 ? ctx.pipeline.stages[at + 1] : undefined;
      notices.reply(`stage-healthy:${stage.name}`, 'stage-healthy', next?.kargo ? { promoteTo: next.name, ...promotedFreight(stage) } : {}, stage.name);
    }
    for (const key of keys) {
      const t = stage.targets[key];
      if (t === undefined) continue;
      // Most of a step's thousands of targets have no notice due: passed over without a call.
      if (t.kargo) kargoNotices(notices, stage, t, now, ctx);
      else if (mayNotice(t)) targetNotices(notices, stage, t, now, ctx, stepStage);
    }
  }
  notices.effects.push(...appSetOrderFailures(record, ctx.pipeline, now, ctx.unhealthyGraceMs));
  record.status = releaseStatus(record, keysOf);
  if (record.status === 'Complete' || record.status === 'Superseded') {
    record.finishedAt ??= now;
    if (record.status === 'Complete') notices.reply('release-complete', 'release-complete', {});
  } else {
    delete record.finishedAt;
  }
  if (record.stall) markStalled(record);
  return notices.effects;
}

/** The stage's selector as the config wrote it, which a split adds the app label to. */
function selectorOf(ctx: ReduceContext, stage: string): { selector?: string } {
  const config = ctx.pipeline.stages.find((s) => s.name === stage);
  const selector = config?.rollouts?.selector.text ?? config?.applications?.selector.text;
  return selector !== undefined ? { selector } : {};
}

/** The stages that were expected to move show Stalled; the first stage does when nothing started yet. */
function markStalled(record: ReleaseRecord): void {
  let marked = false;
  for (const stage of record.stages) {
    if (stage.healthyAt === undefined && (stage.status === 'Progressing' || stage.status === 'Paused')) {
      stage.status = 'Stalled';
      marked = true;
    }
  }
  const first = record.stages[0];
  if (!marked && first && first.status === 'Waiting') first.status = 'Stalled';
}
