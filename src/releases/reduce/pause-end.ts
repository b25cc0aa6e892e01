/**
 * The end of a pause a person was asked about. When a Rollout that waited for approval is
 * resumed, promoted or aborted (through Glidepath or outside it: kubectl, the Argo CD UI), moves
 * to another pod template or to another release, the "paused" reply loses its buttons and says
 * how the pause ended; a change made outside Glidepath is also said in the thread. Whether
 * Glidepath did it is read from the own-actions ledger the worker passes in the context. Pure.
 */
import { targetKey } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import { awaitsPerson, hasNotice, noticeReply, type ReplyEffect } from './notices.js';
import { REPLIES_NEEDING_A_PERSON, type Effect, type PauseEnd, type ReleaseRecord, type ReplyDetail, type TargetState } from '../record/record.js';
import { abortActionKey, findOwnAction, resumeActionKey } from './own-action-keys.js';

function refKey(t: TargetState): string {
  return `${t.ref.cluster}/${t.ref.namespace}/${t.ref.name}`;
}

/** Whether the target waits for a person to approve its pause (what a "paused" reply asks). */
export function waitsForApproval(t: TargetState): boolean {
  return t.supersededBy === undefined && !t.aborted && t.phase === 'Paused' && awaitsPerson(t);
}

/**
 * Paused-reply keys by target: every fact's derive asks for each paused target's, and a target is
 * replaced when it changes, never changed in place (target-edit.ts), so its key is built once.
 */
const pausedKeys = new WeakMap<TargetState, string>();

/** The key of the paused reply of `t`'s pause: the same pod template at the same step. */
export function pausedKey(t: TargetState): string {
  let key = pausedKeys.get(t);
  if (key === undefined) pausedKeys.set(t, (key = `paused:${refKey(t)}:${t.podHash ?? ''}:${t.step?.index ?? 'manual'}`));
  return key;
}

/** The "paused" reply a target waiting for approval is announced with: one per pod hash and step. */
export function pausedReply(stage: string, t: TargetState): ReplyEffect {
  const detail: ReplyDetail = {
    generation: t.generation,
    uid: t.uid,
    podHash: t.podHash,
    message: t.pause?.reason,
    stepIndex: t.step?.index,
    stepCount: t.step?.count,
    weight: t.weight,
    // An inconclusive analysis pauses for a person: what it measured is what they judge.
    ...(t.analysis?.status === 'Inconclusive' && t.analysis.metrics ? { metrics: t.analysis.metrics } : {}),
  };
  return { id: pausedKey(t), type: 'thread.reply', kind: 'paused', stage, target: t.ref, needsPerson: REPLIES_NEEDING_A_PERSON.includes('paused'), detail };
}

/**
 * An abort the controller made itself (a failed analysis, a progress deadline with
 * progressDeadlineAbort) is nobody's action; anything else was a person's. Only a failure counts
 * as the controller's evidence: an inconclusive analysis pauses for a person (its message is the
 * pause reason "InconclusiveAnalysisRun" until the controller reconciles an abort), and what ends
 * that pause is the person's abort.
 */
function controllerAbort(t: TargetState): boolean {
  const analysisFailed = t.analysis !== undefined && (t.analysis.status === 'Failed' || t.analysis.status === 'Error');
  return analysisFailed || /ProgressDeadlineExceeded|analysis phase (Failed|Error)|assessed (Failed|Error)/i.test(t.message);
}

/** Who aborted the target: Glidepath (and who), the controller, or a person outside; undefined when the actions are unknown. */
export function abortedBy(t: TargetState, ctx: Pick<ReduceContext, 'ownActions'>): Pick<PauseEnd, 'by' | 'user'> {
  if (controllerAbort(t)) return { by: 'controller' };
  if (ctx.ownActions === undefined) return {};
  const own = findOwnAction(ctx.ownActions[targetKey(t.ref)], abortActionKey(t.podHash));
  return own ? { by: 'glidepath', ...(own.user ? { user: own.user } : {}) } : { by: 'outside' };
}

export function resumedBy(prev: TargetState, ctx: Pick<ReduceContext, 'ownActions'>): Pick<PauseEnd, 'by' | 'user'> {
  if (ctx.ownActions === undefined) return {};
  const own = findOwnAction(ctx.ownActions[targetKey(prev.ref)], resumeActionKey(prev.podHash, prev.step?.index));
  return own ? { by: 'glidepath', ...(own.user ? { user: own.user } : {}) } : { by: 'outside' };
}

/**
 * Every remaining step skipped at once (`promote --full`, Argo CD's promote-full), rather than one
 * step resumed: only on evidence, `status.promoteFull` seen set. A jump to the last step is no
 * evidence: the same jump is what a resume looks like when the steps after it ran while Glidepath
 * heard nothing (the watch down, a takeover, notifications lost).
 */
function promotedFully(next: TargetState): boolean {
  return next.promoteFull === true;
}

/** The step index the Rollout was next heard at, when steps between the pause and it were not seen. */
function unseenStepsUntil(prev: TargetState, next: TargetState): number | undefined {
  if (prev.step === undefined || next.step === undefined) return undefined;
  return next.step.index > prev.step.index + 1 ? next.step.index : undefined;
}

/** The settle effect of the reply `prev` was announced with, when that reply went out. */
function settle(record: ReleaseRecord, stage: string, prev: TargetState, ended: PauseEnd): Effect | undefined {
  if (!hasNotice(record, pausedKey(prev))) return undefined;
  const asked = pausedReply(stage, prev);
  return { id: `settle:${asked.id}`, type: 'thread.settle', reply: asked, ended };
}

/**
 * What the change from `prev` to `next` of one target says about a pause a person was asked
 * about: nothing while the same pause lasts; else the settle of its reply, and a reply when a
 * person outside Glidepath resumed or promoted it (an abort has its own reply, see derive.ts).
 */
export function pauseEnded(record: ReleaseRecord, stage: string, prev: TargetState | undefined, next: TargetState, ctx: Pick<ReduceContext, 'ownActions'>): Effect[] {
  if (!prev || !waitsForApproval(prev)) return [];
  if (waitsForApproval(next) && pausedKey(next) === pausedKey(prev)) return [];
  let ended: PauseEnd;
  if (next.podHash !== prev.podHash) ended = { how: 'new-version' };
  else if (next.aborted) ended = { how: 'aborted', ...abortedBy(next, ctx) };
  else ended = { how: promotedFully(next) ? 'promoted' : 'resumed', ...resumedBy(prev, ctx) };
  const settled = settle(record, stage, prev, ended);
  if (!settled) return [];
  const effects: Effect[] = [settled];
  if ((ended.how === 'resumed' || ended.how === 'promoted') && ended.by === 'outside') {
    const detail: ReplyDetail = {
      by: 'outside',
      generation: next.generation,
      podHash: prev.podHash,
      stepIndex: prev.step?.index,
      stepCount: prev.step?.count,
      ...(ended.how === 'promoted' ? { promotedFully: true } : {}),
      ...(ended.how === 'resumed' && unseenStepsUntil(prev, next) !== undefined ? { heardAtStep: unseenStepsUntil(prev, next) } : {}),
    };
    const reply = noticeReply(record, `resumed:${refKey(prev)}:${prev.podHash ?? ''}:${prev.step?.index ?? 'manual'}`, 'resumed', detail, stage, prev.ref);
    if (reply) effects.push(reply);
  }
  return effects;
}

/** The target moved on to another release: a reply still asking about its pause loses its buttons. */
export function pauseSuperseded(record: ReleaseRecord, stage: string, prev: TargetState, byReleaseId: string): Effect[] {
  if (!waitsForApproval(prev)) return [];
  const settled = settle(record, stage, prev, { how: 'superseded', releaseId: byReleaseId });
  return settled ? [settled] : [];
}
