/**
 * The out-of-order rule for ApplicationSet steps (pure; derive.ts calls it on every fact, after
 * the step stages were judged in derive-appset.ts). The rule, also in docs/reducer.md:
 *
 * A later step *started* at the release's revision while an earlier step, not done, has a member
 * *behind* it (argo-cd#22558, #29410, #29347). The ApplicationSet and its Applications come on
 * separate streams, so an ApplicationSet that started step 2 can be reduced before the step-1
 * child's own Healthy fact: the child looks behind on evidence older than the start. So a member
 * behind counts only on evidence at least as new as the start (object time, not arrival time:
 * a lagging stream delivers old observations late):
 * - the ApplicationSet says it is not Healthy at the revision, in a status that itself shows the
 *   later step started, or whose latest lastTransitionTime is after the start;
 * - its Application contradicts the ApplicationSet's Healthy, in a status Argo CD compared in
 *   full after the start (`status.reconciledAt`; the periodic refresh moves it every few minutes);
 * - or the condition has lasted the unhealthy grace, by fact time, whatever the evidence.
 * Until then the row of the later step says it waits for confirmation; nothing fails.
 * Confirmed, the row is Degraded (the release Failed) while it lasts, and a reply says it once.
 */
import type { PipelineConfig } from '../config/file.js';
import type { AppSetMemberState, OutOfOrderMember } from './appset-record.js';
import { memberIndex } from './derive-appset.js';
import { noticeReply } from './notices.js';
import type { Effect, ReleaseRecord, StageState, TargetState } from './record.js';
import { appSetKeyOfStage } from './reduce-appset.js';

/** Members named in a reply, per side; the rest are counted. */
const MAX_NAMED = 10;

const short = (revision: string | undefined): string => (revision ?? '?').slice(0, 7);

function timeOf(text: string | undefined): number | undefined {
  const at = Date.parse(text ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/** The Application target of a child, wherever this record holds it. */
function childTarget(record: ReleaseRecord, key: string): TargetState | undefined {
  for (const stage of record.stages) {
    const t = stage.targets[key];
    if (t) return t;
  }
  return undefined;
}

/** How a later step's member shows it started at `revision`, and when (object time), if it did. */
interface Start {
  /** The ApplicationSet's own status says so (Pending or Progressing there). */
  inAppSet: boolean;
  at?: number;
}

/**
 * A later step's member started at `revision`: the ApplicationSet moved it on, or its Application
 * synced to it. Healthy alone is not a start: a child Synced at once (its path did not change) is
 * Healthy without a sync.
 */
function startOf(member: AppSetMemberState, target: TargetState | undefined, revision: string): Start | undefined {
  const synced = target !== undefined && (target.sync?.revision === revision || (target.sync?.phase === 'Running' && target.revision === revision));
  const inAppSet = member.targetRevisions.includes(revision) && (member.status === 'Pending' || member.status === 'Progressing');
  if (!synced && !inAppSet) return undefined;
  const times = [synced ? timeOf(target?.sync?.startedAt) : undefined, inAppSet ? timeOf(member.since) : undefined].filter((t): t is number => t !== undefined);
  return { inAppSet, ...(times.length > 0 ? { at: Math.min(...times) } : {}) };
}

/**
 * An earlier step's member is behind `revision` when the ApplicationSet says it is not Healthy at
 * it ('appset'), when its Application contradicts the ApplicationSet's Healthy: compared against
 * another revision, or not Synced, the stale cache ('application'), or when it still targets
 * another revision that this release's child never ran, judged before it was even compared
 * (argo-cd#29347; 'appset'), in a status that speaks of this revision (some entry targets it). A
 * child this release ran that now targets another revision has moved on to a newer release: not
 * behind. A status in which no entry targets the revision is about another rollout (a newer one
 * this release's record took from the known membership or a child's route, or an older one the
 * ApplicationSet's stream has not moved past yet): it says nothing of this release's order.
 */
function behindBy(member: AppSetMemberState, target: TargetState | undefined, revision: string, aboutRevision: boolean): 'appset' | 'application' | undefined {
  if (!member.targetRevisions.includes(revision)) return target === undefined && aboutRevision ? 'appset' : undefined;
  if (member.status !== 'Healthy') return 'appset';
  if (target === undefined || target.revision === undefined) return undefined;
  return target.revision !== revision || (target.syncStatus !== undefined && target.syncStatus !== 'Synced') ? 'application' : undefined;
}

interface Behind {
  step: number;
  name: string;
  member: AppSetMemberState;
  target: TargetState | undefined;
  by: 'appset' | 'application';
  /** When the status that says so was written, at the latest known (object time). */
  evidenceAt?: number;
}

interface Started {
  named: OutOfOrderMember[];
  count: number;
  inAppSet: boolean;
  /** The earliest start seen (object time). */
  at?: number;
}

/** Evidence strictly after the start (second-precision clocks: the same second may be before it). */
function confirms(b: Behind, s: Started): boolean {
  if (b.by === 'appset' && s.inAppSet) return true;
  return s.at !== undefined && b.evidenceAt !== undefined && b.evidenceAt > s.at;
}

function described(name: string, member: AppSetMemberState, target: TargetState | undefined): OutOfOrderMember {
  const observed = target ? `${target.syncStatus ?? 'Unknown'}/${target.phase} at ${short(target.revision)}` : undefined;
  return { application: name, step: member.step, status: member.status, targets: member.targetRevisions.slice(0, 3), ...(observed ? { observed } : {}) };
}

function stepsText(steps: readonly number[]): string {
  return `step${steps.length > 1 ? 's' : ''} ${steps.join(', ')} ${steps.length > 1 ? 'were' : 'was'}`;
}

/**
 * The out-of-order rule over every ApplicationSet the record knows: marks rows and returns the
 * replies due. `now` is the fact's time; `graceMs` how long a condition may wait for evidence.
 */
export function appSetOrderFailures(record: ReleaseRecord, pipeline: PipelineConfig, now: number, graceMs: number): Effect[] {
  const revision = record.revision;
  if (revision === undefined || !record.appSets) return [];
  const effects: Effect[] = [];
  for (const [key, appSet] of Object.entries(record.appSets)) {
    const stageOfStep = new Map<number, StageState>();
    let holder: StageState | undefined;
    for (const config of pipeline.stages) {
      if (appSetKeyOfStage(config) !== key) continue;
      const stage = record.stages.find((s) => s.name === config.name);
      holder ??= stage;
      const step = config.applicationSet?.step;
      if (step !== undefined && stage) stageOfStep.set(step, stage);
    }
    const index = memberIndex(appSet);
    const aboutRevision = index.targeted.has(revision);
    const started = new Map<number, Started>();
    const behind: Behind[] = [];
    for (const { name, member, key: childKey } of index.all) {
      const step = Number(member.step);
      if (!Number.isInteger(step) || step < 1) continue;
      const target = childTarget(record, childKey);
      const start = startOf(member, target, revision);
      if (start) {
        let s = started.get(step);
        if (!s) started.set(step, (s = { named: [], count: 0, inAppSet: false }));
        s.count += 1;
        if (s.named.length < MAX_NAMED) s.named.push(described(name, member, target));
        s.inAppSet ||= start.inAppSet;
        if (start.at !== undefined && (s.at === undefined || start.at < s.at)) s.at = start.at;
      }
      // A step whose stage was done at this revision stays done: a later change there is no fault of the order.
      const by = stageOfStep.get(step)?.healthyAt === undefined ? behindBy(member, target, revision, aboutRevision) : undefined;
      if (by) {
        const evidenceAt = by === 'application' ? timeOf(target?.reconciledAt) : index.latestTransition;
        behind.push({ step, name, member, target, by, ...(evidenceAt !== undefined ? { evidenceAt } : {}) });
      }
    }
    const seenBefore = holder?.stepProgress?.orderSeenAt ?? {};
    const seen: Record<string, number> = {};
    for (const [step, startedMembers] of [...started].sort((a, b) => a[0] - b[0])) {
      const earlier = behind.filter((b) => b.step < step);
      if (earlier.length === 0) continue;
      const condition = `${revision}:${step}`;
      const since = (seen[condition] = seenBefore[condition] ?? now);
      const confirmed = now - since >= graceMs ? earlier : earlier.filter((b) => confirms(b, startedMembers));
      const earlierSteps = [...new Set(earlier.map((b) => b.step))].sort((a, b) => a - b);
      const flagged = stageOfStep.get(step) ?? stageOfStep.get(earlierSteps[0] as number);
      if (confirmed.length === 0) {
        if (flagged?.stepProgress) flagged.stepProgress.unconfirmed = `step ${step} started before ${stepsText(earlierSteps)} seen Healthy at ${short(revision)}`;
        continue;
      }
      const behindSteps = [...new Set(confirmed.map((b) => b.step))].sort((a, b) => a - b);
      const what = `step ${step} started before ${stepsText(behindSteps)} Healthy at ${short(revision)}`;
      if (flagged) {
        flagged.status = 'Degraded';
        if (flagged.stepProgress) flagged.stepProgress.outOfOrder = what;
      }
      const named = [...confirmed].sort((a, b) => a.step - b.step).slice(0, MAX_NAMED);
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
            behind: named.map((b) => described(b.name, b.member, b.target)),
            moreStarted: startedMembers.count - startedMembers.named.length,
            moreBehind: confirmed.length - named.length,
          },
        },
        flagged?.name,
        appSet.ref,
      );
      if (reply) effects.push(reply);
    }
    if (holder?.stepProgress) {
      if (Object.keys(seen).length > 0) holder.stepProgress.orderSeenAt = seen;
      else delete holder.stepProgress.orderSeenAt;
    }
  }
  return effects;
}
