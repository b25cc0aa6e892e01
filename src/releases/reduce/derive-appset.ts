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
import type { PipelineConfig } from '../../config/file.js';
import type { AppSetMemberState, AppSetState, StepProgress } from '../record/appset-record.js';
import type { ReleaseRecord, StageState, TargetState } from '../record/record.js';
import { appSetKeyOfStage } from '../record/appset-record.js';
import { stateBefore } from './appset-known.js';
import { keepUnlisted } from './reduce-appset.js';
import { childTargetKey } from '../../routing/route-appset.js';
import { activeTargets, troubleStatus } from '../record/stage-targets.js';
import { sameKeys } from '../record/pending.js';
import { dropTarget, putTarget, targetKeys as listTargets } from '../record/target-writes.js';

/** Members whose revisions a row names, and children named as waiting for a comparison. */
const MAX_NAMED = 10;

/**
 * Parsed times by text: the step rules read the entries' and the Applications' times (thousands,
 * a few distinct) on every fact. Parsing is pure, so the cache cannot change a result; it is dropped
 * whole past a bound.
 */
const parsedTimes = new Map<string, number | undefined>();
const MAX_PARSED_TIMES = 10_000;

export function parsedTime(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (parsedTimes.has(text)) return parsedTimes.get(text);
  const parsed = Date.parse(text);
  const at = Number.isNaN(parsed) ? undefined : parsed;
  if (parsedTimes.size >= MAX_PARSED_TIMES) parsedTimes.clear();
  parsedTimes.set(text, at);
  return at;
}

/** A child's own revisions in this release: what its Application was last compared against (every source's). */
export function ownRevisions(target: TargetState): string[] {
  return target.revisions ?? (target.revision !== undefined ? [target.revision] : []);
}

/** The same revisions, in any order (one per source). */
export function sameRevisions(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  // One source (the usual child): no copies to sort, for each of thousands of members on every fact.
  if (a.length === 1) return a[0] === b[0];
  const sorted = [...b].sort();
  return [...a].sort().every((r, i) => r === sorted[i]);
}

/**
 * Healthy and Synced at its own revisions in its Application, on a comparison of its current
 * spec (argo-cd#29410: a status compared against the previous spec says nothing of this one).
 */
export function atOwnRevisions(target: TargetState): boolean {
  return target.phase === 'Healthy' && (target.syncStatus === undefined || target.syncStatus === 'Synced') && target.staleComparison === undefined && hasOwnRevisions(target);
}

/** ownRevisions(target).length > 0, without making the list (thousands of members on every fact). */
export function hasOwnRevisions(target: TargetState): boolean {
  return target.revisions !== undefined ? target.revisions.length > 0 : target.revision !== undefined;
}

/** ownRevisions(target).includes(revision), without making the list. */
export function ownRevisionsInclude(target: TargetState, revision: string): boolean {
  return target.revisions !== undefined ? target.revisions.includes(revision) : target.revision === revision;
}

/** The ApplicationSet's entry speaks of the child's own revisions (not of a previous or a newer change). */
export function entryAbout(member: AppSetMemberState, target: TargetState): boolean {
  if (target.revisions !== undefined) return sameRevisions(member.targetRevisions, target.revisions);
  // One source (the usual child): compared without making its one-revision list.
  const entry = member.targetRevisions;
  return target.revision === undefined ? entry.length === 0 : entry.length === 1 && entry[0] === target.revision;
}

/**
 * Done: Healthy in the ApplicationSet's status at the child's own revisions, and its Application
 * Healthy and Synced there. `about`: entryAbout(member, target), when the caller has it.
 */
export function memberDone(member: AppSetMemberState, target: TargetState | undefined, about = target !== undefined && entryAbout(member, target)): boolean {
  return target !== undefined && member.status === 'Healthy' && about && atOwnRevisions(target);
}

/**
 * A member whose child moved on to a newer release is done here when its Application was, the
 * last time this release heard it: latched, or Healthy and Synced at its own revisions.
 */
export function doneWhenMovedOn(target: TargetState): boolean {
  return target.healthyAt !== undefined || atOwnRevisions(target);
}

/** The ApplicationSet targets the child at other revisions than its own here (a newer release, or one not compared yet); `about`: entryAbout. */
function leaving(member: AppSetMemberState, about: boolean): boolean {
  return member.targetRevisions.length > 0 && !about;
}

/**
 * Whether this release reached the child, on its Application's own word: a sync of its own
 * revisions ended, or it is Synced there on a current comparison (nothing to sync: its
 * path did not change). Before that, its health is the previous revision's live state: not a
 * failure of this release. The ApplicationSet's Pending is not enough: the sync has not begun.
 */
export function reached(target: TargetState): boolean {
  // A sync still running leaves the previous live state in place: its health is not this revision's yet.
  if (target.sync !== undefined && target.sync.phase !== 'Running' && target.sync.revision !== undefined && ownRevisionsInclude(target, target.sync.revision)) return true;
  return target.syncStatus === 'Synced' && target.staleComparison === undefined;
}

/**
 * A child this release has not reached yet, in a step stage judged by judgeStepStage: its trouble
 * is the previous revision's, and says nothing of this release. Asked of one target when its
 * trouble matters (most of a step's thousands have none), instead of listing them all on every fact.
 */
export function notReachedHere(target: TargetState): boolean {
  return target.supersededBy === undefined && !reached(target);
}

/**
 * What a row says of the members' revisions: one shared revision, else each member's own (bounded).
 * `count` members, the i-th's target key `keyAt(i)` and name `nameAt(i)`: one pass that makes no
 * list per member (a step holds thousands, judged on every fact), and a second only for a row that
 * names members.
 */
function revisionsShown(count: number, keyAt: (i: number) => string, nameAt: (i: number) => string, targets: StageState['targets'], fallback: string | undefined): Pick<StepProgress, 'revision' | 'revisions'> {
  // The first heard member's one revision, while every heard member has exactly that one.
  let shared: string | undefined;
  let heard = false;
  let one = true;
  for (let i = 0; i < count && one; i++) {
    const t = targets[keyAt(i)];
    if (t === undefined || !hasOwnRevisions(t)) continue;
    const revisions = t.revisions;
    const revision = revisions === undefined ? t.revision : revisions.length === 1 ? revisions[0] : undefined;
    if (!heard) {
      heard = true;
      shared = revision;
      if (revision === undefined) one = false;
    } else if (revision !== shared) one = false;
  }
  // No member heard yet: the release's one revision, when it is keyed by one.
  if (!heard) return fallback !== undefined ? { revision: fallback } : {};
  if (one && shared !== undefined) return { revision: shared };
  const own: { application: string; revisions: string[] }[] = [];
  for (let i = 0; i < count && own.length < MAX_NAMED; i++) {
    const t = targets[keyAt(i)];
    if (t !== undefined && hasOwnRevisions(t)) own.push({ application: nameAt(i), revisions: ownRevisions(t) });
  }
  return { revisions: own };
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
  /** The latest lastTransitionTime of any entry (ms): the status was written at least this late. */
  latestTransition?: number;
  /** Every revision some entry targets. */
  targeted: Set<string>;
}

const indexes = new WeakMap<AppSetState, MemberIndex>();
/** Each entry's Member (its name and target key beside it): an entry carried into the next state (appSetStateOf) keeps it. */
const membersOfEntries = new WeakMap<AppSetMemberState, Member>();
/** The target keys of a step's members, by members list. */
const keysOfMembers = new WeakMap<readonly Member[], Set<string>>();

function memberOf(appSet: AppSetState, name: string, member: AppSetMemberState): Member {
  const kept = membersOfEntries.get(member);
  if (kept !== undefined && kept.name === name && kept.key === childTargetKey(appSet.ref, name)) return kept;
  const made = { name, member, key: childTargetKey(appSet.ref, name) };
  membersOfEntries.set(member, made);
  return made;
}

/** The same members in the same order: the list of the state before, reused (and the keys built for it). */
function sameList(a: readonly Member[], b: readonly Member[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The same target keys in the same order (the members' entries may have changed). */
function sameKeyOrder(a: readonly Member[], b: readonly Member[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.key !== b[i]!.key) return false;
  return true;
}

export function memberIndex(appSet: AppSetState): MemberIndex {
  let index = indexes.get(appSet);
  if (index) return index;
  // A status write moves a few entries of thousands: the index of the state before lends its lists.
  const before = stateBefore(appSet);
  const prior = before !== undefined ? indexes.get(before) : undefined;
  const all: Member[] = [];
  const byStep = new Map<string, Member[]>();
  let latest = Number.NEGATIVE_INFINITY;
  const targeted = new Set<string>();
  for (const name in appSet.members) {
    const member = appSet.members[name]!;
    const m = memberOf(appSet, name, member);
    all.push(m);
    const list = byStep.get(member.step);
    if (list) list.push(m);
    else byStep.set(member.step, [m]);
    for (const r of member.targetRevisions) targeted.add(r);
    // Entries moved together share a transition time: parsedTime parses each distinct one once.
    const at = parsedTime(member.since);
    if (at !== undefined && at > latest) latest = at;
  }
  for (const [step, list] of byStep) {
    const old = prior?.byStep.get(step);
    if (old !== undefined && sameList(list, old)) byStep.set(step, old);
    else if (old !== undefined && sameKeyOrder(list, old)) {
      const keys = keysOfMembers.get(old);
      if (keys) keysOfMembers.set(list, keys);
    }
  }
  const kept = prior !== undefined && sameList(all, prior.all) ? prior.all : all;
  index = { all: kept, byStep, targeted, ...(Number.isFinite(latest) ? { latestTransition: latest } : {}) };
  indexes.set(appSet, index);
  return index;
}

function membersOfStep(appSet: AppSetState, step: number | undefined): { members: Member[]; keys: Set<string> } {
  const index = memberIndex(appSet);
  const members = step === undefined ? index.all : (index.byStep.get(String(step)) ?? []);
  let keys = keysOfMembers.get(members);
  if (!keys) keysOfMembers.set(members, (keys = new Set(members.map((m) => m.key))));
  return { members, keys };
}

/**
 * Membership, pending members, per-target latches, status and row of one step stage. The children
 * this release has not reached yet (`reached`) are in no trouble of it: notReachedHere says which,
 * of the targets this leaves in the stage.
 */
export function judgeStepStage(record: ReleaseRecord, stage: StageState, pipeline: PipelineConfig, now: number, targetKeys: readonly string[] = listTargets(stage.targets)): void {
  const config = pipeline.stages.find((s) => s.name === stage.name);
  const sel = config?.applicationSet;
  const key = config ? appSetKeyOfStage(config) : undefined;
  if (!sel || key === undefined) return;
  const appSet = record.appSets?.[key];
  // A release keyed by revision has one revision for all; one named by a release id may have one per child.
  const keyRevision = record.idSource === 'annotation' || record.idSource === 'announcement' ? undefined : record.revision;
  // The out-of-order rule's memory (appset-order.ts) outlives each judgement.
  const seen = stage.stepProgress?.orderSeenAt;
  const kept = seen ? { orderSeenAt: seen } : {};
  if (!appSet) {
    // Every step stage holds every child heard so far: never Healthy on that guess; a child not reached is in no trouble of this release.
    if (stage.status === 'Healthy') stage.status = 'Progressing';
    else if (stage.status === 'Degraded' || stage.status === 'Paused' || stage.status === 'Aborted') stage.status = troubleStatus(activeTargets(stage).filter((t) => !notReachedHere(t))) ?? 'Progressing';
    const shown = revisionsShown(targetKeys.length, (i) => targetKeys[i] as string, (i) => stage.targets[targetKeys[i] as string]!.ref.name, stage.targets, keyRevision);
    stage.stepProgress = { ...(sel.step !== undefined ? { step: sel.step } : {}), known: false, members: targetKeys.length, done: 0, ...shown, ...kept };
    return;
  }
  const { members, keys } = membersOfStep(appSet, sel.step);
  // Children placed here before the ApplicationSet was heard, and children that changed step,
  // leave; one it does not list (yet) is kept aside as heard, for its row once it does.
  let held = 0;
  for (const k of targetKeys) {
    const target = stage.targets[k];
    if (target === undefined) continue;
    if (keys.has(k)) held += 1;
    else {
      dropTarget(stage.targets, k);
      if (appSet.members[target.ref.name] === undefined) keepUnlisted(record, k, key, target);
    }
  }
  // What is left are members' targets: one pass over the members sees each of them once.
  let done = 0;
  let movedOn = 0;
  let active = 0;
  let activeReached = false;
  let started = false;
  let movedHere = false;
  let waitingAbsent = false;
  const trouble = { aborted: false, degraded: false, paused: false };
  const pending: string[] = [];
  const comparing: string[] = [];
  for (const { name, member, key } of members) {
    const status = member.status;
    if (status === 'Pending' || status === 'Progressing') started = true;
    const target = stage.targets[key];
    if (!target) {
      pending.push(key);
      if (status !== 'Waiting') waitingAbsent = true;
    } else if (target.supersededBy !== undefined) {
      // The ApplicationSet now speaks of the newer release: the child counts as it last was here.
      movedOn += 1;
      if (doneWhenMovedOn(target)) done += 1;
      if (status !== 'Waiting' && entryAbout(member, target)) movedHere = true;
    } else {
      active += 1;
      const about = entryAbout(member, target);
      if (status !== 'Waiting' && about) movedHere = true;
      if (reached(target)) {
        // A child not reached is in no trouble of this release.
        activeReached = true;
        if (target.aborted) trouble.aborted = true;
        if (target.phase === 'Degraded') trouble.degraded = true;
        if (target.phase === 'Paused') trouble.paused = true;
      }
      if (target.staleComparison !== undefined) comparing.push(name);
      if (leaving(member, about)) {
        // The ApplicationSet targets other revisions than the child's own here (its word or the child's is older): done here if it was.
        if (target.healthyAt !== undefined) done += 1;
      } else if (memberDone(member, target, about)) {
        done += 1;
        if (target.healthyAt === undefined) putTarget(stage.targets, key, { ...target, healthyAt: now });
      }
    }
  }
  pending.sort();
  if (!sameKeys(stage.pending, pending)) stage.pending = pending;
  const troubled = trouble.aborted ? 'Aborted' : trouble.degraded ? 'Degraded' : trouble.paused ? 'Paused' : undefined;
  const complete = members.length > 0 && done === members.length;
  if (active > 0 || held === 0) {
    // Waiting while no child was reached and the ApplicationSet moved none on at its own revisions (the stale cache's Healthy is a move).
    const moved = movedHere || (waitingAbsent && started);
    const nothingYet = !started && !moved && done === 0 && !activeReached;
    stage.status = troubled ?? (complete ? 'Healthy' : nothingYet ? 'Waiting' : 'Progressing');
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
    ...revisionsShown(members.length, (i) => (members[i] as Member).key, (i) => (members[i] as Member).name, stage.targets, keyRevision),
    ...(comparing.length > 0 ? { comparing: { named: comparing.sort().slice(0, MAX_NAMED), count: comparing.length } } : {}),
    ...kept,
  };
  stage.stepProgress = progress;
}
