/**
 * ApplicationSet step stages, judged (pure; called by derive.ts on every fact). The rules, also in
 * docs/reducer.md:
 *
 * - A step stage's members are the children the ApplicationSet's status puts in its step (every
 *   child for a stage that names no step). Before the ApplicationSet is heard, membership is a
 *   guess and the stage is never Healthy.
 * - A member is done when the ApplicationSet says Healthy, its targetRevisions contain the
 *   release's revision, and its Application was heard in this release Healthy and Synced at that
 *   revision. Never on the ApplicationSet's Healthy alone: that is what a stale cache gets wrong;
 *   a member whose Application was not heard yet is pending, as a Rollout not heard yet is.
 * - A member whose child moved on to a newer release counts as it last was in this one (the
 *   ApplicationSet's entry then speaks of the newer revision): done when it was Healthy and Synced
 *   at the revision. One whose entry targets another revision before its child's own fact says it
 *   moved on is done when it was done here (its latch).
 * - A step stage is Healthy when every member is done; a step that lists no member is not.
 *
 * The out-of-order rule (a later step started while an earlier one was not done) is in
 * appset-order.ts; it reads the member index built here.
 */
import type { PipelineConfig } from '../config/file.js';
import type { AppSetMemberState, AppSetState, StepProgress } from './appset-record.js';
import type { ReleaseRecord, StageState, TargetState } from './record.js';
import { appSetKeyOfStage } from './reduce-appset.js';
import { childTargetKey } from './route-appset.js';
import { activeTargets, troubleStatus } from './stage-targets.js';

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/** Done at `revision`: Healthy in the ApplicationSet's status, targeting it, and its Application heard Healthy and Synced at it. */
export function memberDone(member: AppSetMemberState, target: TargetState | undefined, revision: string | undefined): boolean {
  if (revision === undefined || target === undefined || member.status !== 'Healthy' || !member.targetRevisions.includes(revision)) return false;
  return target.phase === 'Healthy' && target.revision === revision && (target.syncStatus === undefined || target.syncStatus === 'Synced');
}

/**
 * A member whose child moved on to a newer release is done here when its Application was, the
 * last time this release heard it: latched at the revision, or Healthy and Synced at it.
 */
export function doneWhenMovedOn(target: TargetState, revision: string | undefined): boolean {
  if (target.healthyAt !== undefined) return true;
  return revision !== undefined && target.phase === 'Healthy' && target.revision === revision && (target.syncStatus === undefined || target.syncStatus === 'Synced');
}

/** The ApplicationSet targets the child at another revision than the release's (a newer release, or one not compared yet). */
function leaving(member: AppSetMemberState, revision: string | undefined): boolean {
  return revision !== undefined && member.targetRevisions.length > 0 && !member.targetRevisions.includes(revision);
}

export interface Member {
  name: string;
  member: AppSetMemberState;
  /** The child's target key. */
  key: string;
}

/**
 * Members by step, with their target keys, built once per ApplicationSet state: the record
 * replaces that object only when an ApplicationSet fact changes it, and the derivation runs on
 * every fact (an ApplicationSet can have thousands of children).
 */
export interface MemberIndex {
  all: Member[];
  byStep: Map<string, Member[]>;
  keys: Map<Member[], Set<string>>;
  /** The latest lastTransitionTime of any entry (ms): the status was written at least this late. */
  latestTransition?: number;
  /** Every revision some entry targets. */
  targeted: Set<string>;
}

const indexes = new WeakMap<AppSetState, MemberIndex>();

export function memberIndex(appSet: AppSetState): MemberIndex {
  let index = indexes.get(appSet);
  if (!index) {
    const all = Object.entries(appSet.members).map(([name, member]) => ({ name, member, key: childTargetKey(appSet.ref, name) }));
    const byStep = new Map<string, Member[]>();
    let latest = Number.NEGATIVE_INFINITY;
    const targeted = new Set<string>();
    for (const m of all) {
      (byStep.get(m.member.step) ?? byStep.set(m.member.step, []).get(m.member.step)!).push(m);
      for (const r of m.member.targetRevisions) targeted.add(r);
      const at = Date.parse(m.member.since ?? '');
      if (at > latest) latest = at;
    }
    indexes.set(appSet, (index = { all, byStep, keys: new Map(), targeted, ...(Number.isFinite(latest) ? { latestTransition: latest } : {}) }));
  }
  return index;
}

function membersOfStep(appSet: AppSetState, step: number | undefined): { members: Member[]; keys: Set<string> } {
  const index = memberIndex(appSet);
  const members = step === undefined ? index.all : (index.byStep.get(String(step)) ?? []);
  let keys = index.keys.get(members);
  if (!keys) index.keys.set(members, (keys = new Set(members.map((m) => m.key))));
  return { members, keys };
}

/** Membership, pending members, per-target latches, status and row of one step stage. */
export function judgeStepStage(record: ReleaseRecord, stage: StageState, pipeline: PipelineConfig, now: number): void {
  const config = pipeline.stages.find((s) => s.name === stage.name);
  const sel = config?.applicationSet;
  const key = config ? appSetKeyOfStage(config) : undefined;
  if (!sel || key === undefined) return;
  const revision = record.revision;
  const appSet = record.appSets?.[key];
  // The out-of-order rule's memory (appset-order.ts) outlives each judgement.
  const seen = stage.stepProgress?.orderSeenAt;
  const kept = seen ? { orderSeenAt: seen } : {};
  if (!appSet) {
    // Every step stage holds every child heard so far: never Healthy on that guess.
    if (stage.status === 'Healthy') stage.status = 'Progressing';
    stage.stepProgress = { ...(sel.step !== undefined ? { step: sel.step } : {}), known: false, members: Object.keys(stage.targets).length, done: 0, ...(revision ? { revision } : {}), ...kept };
    return;
  }
  const { members, keys } = membersOfStep(appSet, sel.step);
  // Children placed here before the ApplicationSet was heard, and children that changed step, leave.
  for (const k of Object.keys(stage.targets)) if (!keys.has(k)) delete stage.targets[k];
  let done = 0;
  let movedOn = 0;
  const pending: string[] = [];
  for (const { member, key } of members) {
    const target = stage.targets[key];
    if (!target) pending.push(key);
    else if (target.supersededBy !== undefined) {
      // The ApplicationSet now speaks of the newer release: the child counts as it last was here.
      movedOn += 1;
      if (doneWhenMovedOn(target, revision)) done += 1;
    } else if (leaving(member, revision)) {
      // The ApplicationSet already targets another revision, the child's own word has not come yet: done here if it was.
      if (target.healthyAt !== undefined) done += 1;
    } else if (memberDone(member, target, revision)) {
      done += 1;
      if (target.healthyAt === undefined) stage.targets[key] = { ...target, healthyAt: now };
    }
  }
  pending.sort();
  if (!sameKeys(stage.pending, pending)) stage.pending = pending;
  const active = activeTargets(stage);
  const started = members.some((m) => m.member.status === 'Pending' || m.member.status === 'Progressing');
  const complete = members.length > 0 && done === members.length;
  if (active.length > 0 || Object.keys(stage.targets).length === 0) {
    stage.status = troubleStatus(active) ?? (complete ? 'Healthy' : active.length === 0 && !started && done === 0 ? 'Waiting' : 'Progressing');
  } else if (complete) {
    // Every child moved on, each done here when it left.
    stage.status = 'Healthy';
  } else if (stage.status === 'Healthy') {
    // Every child moved on, not all of them done here (or one never heard here): not Healthy for this release.
    stage.status = 'Progressing';
  }
  const progress: StepProgress = {
    ...(sel.step !== undefined ? { step: sel.step } : {}),
    ...(appSet.stepCount !== undefined ? { stepCount: appSet.stepCount } : {}),
    known: true,
    members: members.length,
    done,
    ...(movedOn > 0 ? { movedOn } : {}),
    ...(revision ? { revision } : {}),
    ...kept,
  };
  stage.stepProgress = progress;
}
