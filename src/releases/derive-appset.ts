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
 * - A step stage is Healthy when every member is done; a step that lists no member is not.
 * - Out of order (argo-cd#22558, #29410, #29347): a later step started at the release's revision
 *   while an earlier step, not yet done, has a member behind it. That is a failure: the later
 *   step's row is Degraded (the release Failed) while it lasts, and a reply says it once.
 */
import type { PipelineConfig } from '../config/file.js';
import type { AppSetMemberState, AppSetState, OutOfOrderMember, StepProgress } from './appset-record.js';
import { noticeReply } from './notices.js';
import type { Effect, ReleaseRecord, StageState, TargetState } from './record.js';
import { appSetKeyOfStage } from './reduce-appset.js';
import { childTargetKey } from './route-appset.js';

/** Members named in a reply, per side; the rest are counted. */
const MAX_NAMED = 10;

const short = (revision: string | undefined): string => (revision ?? '?').slice(0, 7);

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/** Done at `revision`: Healthy in the ApplicationSet's status, targeting it, and its Application heard Healthy and Synced at it. */
export function memberDone(member: AppSetMemberState, target: TargetState | undefined, revision: string | undefined): boolean {
  if (revision === undefined || target === undefined || member.status !== 'Healthy' || !member.targetRevisions.includes(revision)) return false;
  return target.phase === 'Healthy' && target.revision === revision && (target.syncStatus === undefined || target.syncStatus === 'Synced');
}

interface Member {
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
interface MemberIndex {
  all: Member[];
  byStep: Map<string, Member[]>;
  keys: Map<Member[], Set<string>>;
}

const indexes = new WeakMap<AppSetState, MemberIndex>();

function indexOf(appSet: AppSetState): MemberIndex {
  let index = indexes.get(appSet);
  if (!index) {
    const all = Object.entries(appSet.members).map(([name, member]) => ({ name, member, key: childTargetKey(appSet.ref, name) }));
    const byStep = new Map<string, Member[]>();
    for (const m of all) (byStep.get(m.member.step) ?? byStep.set(m.member.step, []).get(m.member.step)!).push(m);
    indexes.set(appSet, (index = { all, byStep, keys: new Map() }));
  }
  return index;
}

function membersOfStep(appSet: AppSetState, step: number | undefined): { members: Member[]; keys: Set<string> } {
  const index = indexOf(appSet);
  const members = step === undefined ? index.all : (index.byStep.get(String(step)) ?? []);
  let keys = index.keys.get(members);
  if (!keys) index.keys.set(members, (keys = new Set(members.map((m) => m.key))));
  return { members, keys };
}

function activeStatus(stage: StageState): StageState['status'] | undefined {
  const active = Object.values(stage.targets).filter((t) => t.supersededBy === undefined);
  if (active.some((t) => t.aborted)) return 'Aborted';
  if (active.some((t) => t.phase === 'Degraded')) return 'Degraded';
  if (active.some((t) => t.phase === 'Paused')) return 'Paused';
  return undefined;
}

/** Membership, pending members, per-target latches, status and row of one step stage. */
export function judgeStepStage(record: ReleaseRecord, stage: StageState, pipeline: PipelineConfig, now: number): void {
  const config = pipeline.stages.find((s) => s.name === stage.name);
  const sel = config?.applicationSet;
  const key = config ? appSetKeyOfStage(config) : undefined;
  if (!sel || key === undefined) return;
  const revision = record.revision;
  const appSet = record.appSets?.[key];
  if (!appSet) {
    // Every step stage holds every child heard so far: never Healthy on that guess.
    if (stage.status === 'Healthy') stage.status = 'Progressing';
    stage.stepProgress = { ...(sel.step !== undefined ? { step: sel.step } : {}), known: false, members: Object.keys(stage.targets).length, done: 0, ...(revision ? { revision } : {}) };
    return;
  }
  const { members, keys } = membersOfStep(appSet, sel.step);
  // Children placed here before the ApplicationSet was heard, and children that changed step, leave.
  for (const k of Object.keys(stage.targets)) if (!keys.has(k)) delete stage.targets[k];
  let done = 0;
  const pending: string[] = [];
  for (const { member, key } of members) {
    const target = stage.targets[key];
    if (!target) pending.push(key);
    else if (memberDone(member, target, revision)) {
      done += 1;
      if (target.supersededBy === undefined) target.healthyAt ??= now;
    }
  }
  pending.sort();
  if (!sameKeys(stage.pending, pending)) stage.pending = pending;
  const active = Object.values(stage.targets).filter((t) => t.supersededBy === undefined);
  const started = members.some((m) => m.member.status === 'Pending' || m.member.status === 'Progressing');
  if (active.length > 0 || Object.keys(stage.targets).length === 0) {
    stage.status =
      activeStatus(stage) ??
      (members.length > 0 && done === members.length ? 'Healthy' : active.length === 0 && !started && done === 0 ? 'Waiting' : 'Progressing');
  }
  const progress: StepProgress = {
    ...(sel.step !== undefined ? { step: sel.step } : {}),
    ...(appSet.stepCount !== undefined ? { stepCount: appSet.stepCount } : {}),
    known: true,
    members: members.length,
    done,
    ...(revision ? { revision } : {}),
  };
  stage.stepProgress = progress;
}

/** The Application target of a child, wherever this record holds it. */
function childTarget(record: ReleaseRecord, key: string): TargetState | undefined {
  for (const stage of record.stages) {
    const t = stage.targets[key];
    if (t) return t;
  }
  return undefined;
}

/** A later step's member started at `revision`: the ApplicationSet moved it on, or its Application synced to it. */
function startedAt(member: AppSetMemberState, target: TargetState | undefined, revision: string): boolean {
  const syncing = target !== undefined && (target.sync?.revision === revision || (target.sync?.phase === 'Running' && target.revision === revision));
  if (syncing) return true;
  // Healthy alone is not a start: a child Synced at once (its path did not change) is Healthy without a sync.
  return member.targetRevisions.includes(revision) && (member.status === 'Pending' || member.status === 'Progressing');
}

/**
 * An earlier step's member is behind `revision` when the ApplicationSet says it is not Healthy at it,
 * when its Application contradicts the ApplicationSet's Healthy (compared against another revision,
 * or not Synced: the stale cache), or when it still targets another revision that this release's
 * child never ran (judged before it was even compared: argo-cd#29347). A child this release ran that
 * now targets another revision has moved on to a newer release: not behind.
 */
function behindAt(member: AppSetMemberState, target: TargetState | undefined, revision: string): boolean {
  if (!member.targetRevisions.includes(revision)) return target === undefined;
  if (member.status !== 'Healthy') return true;
  if (target === undefined || target.revision === undefined) return false;
  return target.revision !== revision || (target.syncStatus !== undefined && target.syncStatus !== 'Synced');
}

function described(name: string, member: AppSetMemberState, target: TargetState | undefined): OutOfOrderMember {
  const observed = target ? `${target.syncStatus ?? 'Unknown'}/${target.phase} at ${short(target.revision)}` : undefined;
  return { application: name, step: member.step, status: member.status, targets: member.targetRevisions.slice(0, 3), ...(observed ? { observed } : {}) };
}

/** The members of one step on one side of the rule: the first few named, all counted. */
interface Named {
  named: OutOfOrderMember[];
  count: number;
}

function note(by: Map<number, Named>, step: number, name: string, member: AppSetMemberState, target: TargetState | undefined): void {
  let entry = by.get(step);
  if (!entry) by.set(step, (entry = { named: [], count: 0 }));
  entry.count += 1;
  if (entry.named.length < MAX_NAMED) entry.named.push(described(name, member, target));
}

/** The out-of-order rule over every ApplicationSet the record knows: marks rows and returns the replies due. */
export function appSetOrderFailures(record: ReleaseRecord, pipeline: PipelineConfig): Effect[] {
  const revision = record.revision;
  if (revision === undefined || !record.appSets) return [];
  const effects: Effect[] = [];
  for (const [key, appSet] of Object.entries(record.appSets)) {
    const stageOfStep = new Map<number, StageState>();
    for (const config of pipeline.stages) {
      const step = config.applicationSet?.step;
      const stage = record.stages.find((s) => s.name === config.name);
      if (step !== undefined && stage && appSetKeyOfStage(config) === key) stageOfStep.set(step, stage);
    }
    const started = new Map<number, Named>();
    const behind = new Map<number, Named>();
    for (const { name, member, key: childKey } of indexOf(appSet).all) {
      const step = Number(member.step);
      if (!Number.isInteger(step) || step < 1) continue;
      const target = childTarget(record, childKey);
      if (startedAt(member, target, revision)) note(started, step, name, member, target);
      // A step whose stage was done at this revision stays done: a later change there is no fault of the order.
      if (stageOfStep.get(step)?.healthyAt === undefined && behindAt(member, target, revision)) note(behind, step, name, member, target);
    }
    for (const [step, startedMembers] of [...started].sort((a, b) => a[0] - b[0])) {
      const behindSteps = [...behind.keys()].filter((s) => s < step).sort((a, b) => a - b);
      if (behindSteps.length === 0) continue;
      const behindMembers = behindSteps.map((s) => behind.get(s) as Named).reduce((all, n) => ({ named: [...all.named, ...n.named], count: all.count + n.count }), { named: [] as OutOfOrderMember[], count: 0 });
      const what = `step ${step} started before step${behindSteps.length > 1 ? 's' : ''} ${behindSteps.join(', ')} ${behindSteps.length > 1 ? 'were' : 'was'} Healthy at ${short(revision)}`;
      const flagged = stageOfStep.get(step) ?? stageOfStep.get(behindSteps[0] as number);
      if (flagged) {
        flagged.status = 'Degraded';
        if (flagged.stepProgress) flagged.stepProgress.outOfOrder = what;
      }
      const reply = noticeReply(
        record,
        `appset-out-of-order:${key}:${revision}:${step}`,
        'appset-out-of-order',
        {
          revision,
          message: what,
          outOfOrder: {
            appSet: `${appSet.ref.cluster}/${appSet.ref.namespace}/${appSet.ref.name}`,
            startedStep: step,
            behindSteps,
            revision,
            started: startedMembers.named,
            behind: behindMembers.named.slice(0, MAX_NAMED),
            moreStarted: startedMembers.count - startedMembers.named.length,
            moreBehind: behindMembers.count - Math.min(MAX_NAMED, behindMembers.named.length),
          },
        },
        flagged?.name,
        appSet.ref,
      );
      if (reply) effects.push(reply);
    }
  }
  return effects;
}
