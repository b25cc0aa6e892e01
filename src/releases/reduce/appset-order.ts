/**
 * The out-of-order rule for ApplicationSet steps (pure; derive.ts calls it on every fact, after
 * the step stages were judged in derive-appset.ts). The rule, also in docs/reducer.md:
 *
 * A later step *started* (a member at its own revisions) while an earlier step, not done, has a
 * member *behind*: its Application not Healthy and Synced at its own revisions on a current
 * comparison, whatever the ApplicationSet's entry says (argo-cd#22558: health lags the sync;
 * #29410, #29347). The ApplicationSet and its Applications come on
 * separate streams, so an ApplicationSet that started step 2 can be reduced before the step-1
 * child's own Healthy fact: the child looks behind on evidence older than the start. So a member
 * behind counts only on evidence at least as new as the start (object time, not arrival time:
 * a lagging stream delivers old observations late):
 * - the ApplicationSet says it is not Healthy at the revision, in a status that itself shows the
 *   later step started, or whose latest lastTransitionTime is after the start;
 * - its Application says so in a status Argo CD compared in full after the start
 *   (`status.reconciledAt`; the periodic refresh moves it every few minutes) or whose health
 *   changed after it (`status.health.lastTransitionTime`: Degraded after the next step started);
 * - or the condition has lasted the unhealthy grace, by fact time, whatever the evidence.
 * Until then the row of the later step says it waits for confirmation; nothing fails.
 * Confirmed, the row is Degraded (the release Failed) while it lasts, and a reply says it once.
 */
import type { PipelineConfig } from '../../config/file.js';
import type { AppSetMemberState, OutOfOrderMember } from '../record/appset-record.js';
import { atOwnRevisions, entryAbout, hasOwnRevisions, memberIndex, ownRevisions, ownRevisionsInclude, parsedTime, sameRevisions, type Member } from './derive-appset.js';
import { noticeReply } from './notices.js';
import type { Effect, ReleaseRecord, StageState, TargetState } from '../record/record.js';
import { appSetKeyOfStage } from '../record/appset-record.js';
import { shortRevision } from '../record/revisions.js';

/** Members named in a reply, per side; the rest are counted. */
const MAX_NAMED = 10;


/** The Application target of a child, wherever this record holds it: the stage of its step first, else the first stage that does. */
function childTarget(record: ReleaseRecord, key: string, home: StageState | undefined): TargetState | undefined {
  const here = home?.targets[key];
  if (here) return here;
  for (const stage of record.stages) {
    const t = stage.targets[key];
    if (t) return t;
  }
  return undefined;
}

/** Each member's target (childTarget), looked up once: the rule reads them twice, for thousands of members. */
function targetsOfMembers(record: ReleaseRecord, members: readonly Member[], stageOfStep: ReadonlyMap<number, StageState>): (TargetState | undefined)[] {
  const out = new Array<TargetState | undefined>(members.length);
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    out[i] = childTarget(record, m.key, stageOfStep.get(Number(m.member.step)));
  }
  return out;
}

/** How a later step's member shows it started at its own revisions, and when (object time), if it did. */
interface Start {
  /** The ApplicationSet's own status says so (Pending or Progressing there). */
  inAppSet: boolean;
  at?: number;
}

/**
 * The ApplicationSet's entry is about this release: about the child's own revisions when the
 * release heard the child, else about a revision some child of the release reports.
 */
function aboutRelease(member: AppSetMemberState, target: TargetState | undefined, releaseRevisions: ReadonlySet<string>): boolean {
  if (target !== undefined) return entryAbout(member, target);
  return member.targetRevisions.some((r) => releaseRevisions.has(r));
}

/**
 * A later step's member started in this release: the ApplicationSet moved it on at its own
 * revisions, or its Application synced them. Healthy alone is not a start: a child Synced at once
 * (its path did not change) is Healthy without a sync.
 */
function startOf(member: AppSetMemberState, target: TargetState | undefined, releaseRevisions: ReadonlySet<string>): Start | undefined {
  const syncRevision = target?.sync?.revision;
  const synced = target !== undefined && hasOwnRevisions(target) && ((syncRevision !== undefined && ownRevisionsInclude(target, syncRevision)) || target.sync?.phase === 'Running');
  const inAppSet = (member.status === 'Pending' || member.status === 'Progressing') && aboutRelease(member, target, releaseRevisions);
  if (!synced && !inAppSet) return undefined;
  // The earlier of the two starts known (object time).
  const syncAt = synced ? parsedTime(target?.sync?.startedAt) : undefined;
  const entryAt = inAppSet ? parsedTime(member.since) : undefined;
  const at = syncAt === undefined ? entryAt : entryAt === undefined ? syncAt : Math.min(syncAt, entryAt);
  return { inAppSet, ...(at !== undefined ? { at } : {}) };
}

/**
 * An earlier step's member is behind when its Application, heard in this release, is not Healthy
 * and Synced at its own revisions on a current comparison ('application'), whatever the
 * ApplicationSet's entry says: Argo CD's health lags the sync (argo-cd#22558), and a comparison of
 * the previous spec says nothing (#29410). One whose entry already targets revisions no child of
 * this release reports has moved on to a newer release (its own fact has not come yet): not behind.
 * A member whose Application was not heard is behind on the ApplicationSet's word ('appset'): not
 * Healthy (at a revision of this release, or at all when each child has its own), or, with one
 * revision for all, still targeting another, never compared (#29347), in a status that speaks of
 * this release (some entry targets its revision).
 */
function behindBy(member: AppSetMemberState, target: TargetState | undefined, releaseRevisions: ReadonlySet<string>, aboutAny: boolean, perChild: boolean): 'appset' | 'application' | undefined {
  if (target !== undefined) {
    if (target.supersededBy !== undefined || atOwnRevisions(target) || !hasOwnRevisions(target)) return undefined;
    const movedOn = member.targetRevisions.length > 0 && !entryAbout(member, target) && !member.targetRevisions.some((r) => releaseRevisions.has(r));
    return movedOn ? undefined : 'application';
  }
  // Not heard: its own revisions are not known. The ApplicationSet's entry about a revision of the
  // release, or any entry when each child has its own (the same status shows the later step started), says
  // whether it is Healthy; with one revision for all, an entry still targeting another was never compared.
  if (perChild || member.targetRevisions.some((r) => releaseRevisions.has(r))) return member.status !== 'Healthy' ? 'appset' : undefined;
  return aboutAny ? 'appset' : undefined;
}

interface Behind {
  step: number;
  name: string;
  member: AppSetMemberState;
  target: TargetState | undefined;
  by: 'appset' | 'application';
}

interface Started {
  named: OutOfOrderMember[];
  count: number;
  inAppSet: boolean;
  /** The earliest start seen (object time). */
  at?: number;
  /** Each started child's own revisions (for the one shared revision a reply names). */
  revisions: string[][];
}

/**
 * Evidence strictly after the start (second-precision clocks: the same second may be before it).
 * `appSetWrittenAt`: the latest lastTransitionTime of the ApplicationSet's entries. The evidence is
 * looked up only here: most members behind are never asked (no later step started, or the grace ended).
 */
function confirms(b: Behind, s: Started, appSetWrittenAt: number | undefined): boolean {
  if (b.by === 'appset' && s.inAppSet) return true;
  if (s.at === undefined) return false;
  // When the status that says so was written, at the latest known (object time).
  const evidenceAt = b.by === 'application' ? applicationEvidence(b.target) : appSetWrittenAt;
  return evidenceAt !== undefined && evidenceAt > s.at;
}

/** The Application's latest word in object time: a full comparison, or a health change. */
function applicationEvidence(target: TargetState | undefined): number | undefined {
  const times = [parsedTime(target?.reconciledAt), parsedTime(target?.healthSince)].filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.max(...times) : undefined;
}

function described(name: string, member: AppSetMemberState, target: TargetState | undefined): OutOfOrderMember {
  const own = target ? ownRevisions(target) : [];
  const stale = target?.staleComparison ? ', not compared with its new spec yet' : '';
  const observed = target ? `${target.syncStatus ?? 'Unknown'}/${target.phase} at ${own.map(shortRevision).join(', ') || '?'}${stale}` : undefined;
  return {
    application: name,
    step: member.step,
    status: member.status,
    targets: member.targetRevisions.slice(0, 3),
    ...(own.length > 0 ? { own: own.slice(0, 3) } : {}),
    ...(observed ? { observed } : {}),
  };
}

function stepsText(steps: readonly number[]): string {
  return `step${steps.length > 1 ? 's' : ''} ${steps.join(', ')} ${steps.length > 1 ? 'were' : 'was'}`;
}

/** The one revision every child in `lists` is at, when they share one. */
function sharedRevision(lists: readonly (readonly string[])[]): string | undefined {
  const first = lists[0];
  if (!first || first.length !== 1) return undefined;
  return lists.every((l) => sameRevisions(l, first)) ? first[0] : undefined;
}

/** The revisions this release's children report (not moved on), and the release's own label. */
function revisionsOfRelease(record: ReleaseRecord, targets: readonly (TargetState | undefined)[]): Set<string> {
  const out = new Set<string>(record.revision !== undefined && record.idSource !== 'annotation' ? [record.revision] : []);
  for (const t of targets) {
    if (t === undefined || t.supersededBy !== undefined) continue;
    if (t.revisions !== undefined) for (const r of t.revisions) out.add(r);
    else if (t.revision !== undefined) out.add(t.revision);
  }
  return out;
}

/**
 * The out-of-order rule over every ApplicationSet the record knows: marks rows and returns the
 * replies due. `now` is the fact's time; `graceMs` how long a condition may wait for evidence.
 */
export function appSetOrderFailures(record: ReleaseRecord, pipeline: PipelineConfig, now: number, graceMs: number): Effect[] {
  if (!record.appSets) return [];
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
    const targets = targetsOfMembers(record, index.all, stageOfStep);
    const releaseRevisions = revisionsOfRelease(record, targets);
    if (releaseRevisions.size === 0) continue;
    const aboutAny = [...releaseRevisions].some((r) => index.targeted.has(r));
    // A release named by a release id (CI's, in the template) may hold a revision per child; one keyed by revision holds one.
    const perChild = record.idSource === 'annotation' || record.idSource === 'announcement';
    const started = new Map<number, Started>();
    const behind: Behind[] = [];
    for (let i = 0; i < index.all.length; i++) {
      const { name, member } = index.all[i]!;
      const step = Number(member.step);
      if (!Number.isInteger(step) || step < 1) continue;
      const target = targets[i];
      const start = startOf(member, target, releaseRevisions);
      if (start) {
        let s = started.get(step);
        if (!s) started.set(step, (s = { named: [], count: 0, inAppSet: false, revisions: [] }));
        s.count += 1;
        if (s.named.length < MAX_NAMED) s.named.push(described(name, member, target));
        if (target) s.revisions.push(ownRevisions(target));
        s.inAppSet ||= start.inAppSet;
        if (start.at !== undefined && (s.at === undefined || start.at < s.at)) s.at = start.at;
      }
      // A step whose stage was done in this release stays done: a later change there is no fault of the order.
      const by = stageOfStep.get(step)?.healthyAt === undefined ? behindBy(member, target, releaseRevisions, aboutAny, perChild) : undefined;
      if (by) behind.push({ step, name, member, target, by });
    }
    const seenBefore = holder?.stepProgress?.orderSeenAt ?? {};
    const seen: Record<string, number> = {};
    for (const [step, startedMembers] of [...started].sort((a, b) => a[0] - b[0])) {
      const earlier = behind.filter((b) => b.step < step);
      if (earlier.length === 0) continue;
      // One condition per started step of this release, whatever revisions its children are at.
      const condition = String(step);
      const since = (seen[condition] = seenBefore[condition] ?? now);
      const confirmed = now - since >= graceMs ? earlier : earlier.filter((b) => confirms(b, startedMembers, index.latestTransition));
      const earlierSteps = [...new Set(earlier.map((b) => b.step))].sort((a, b) => a - b);
      const flagged = stageOfStep.get(step) ?? stageOfStep.get(earlierSteps[0] as number);
      // The children heard say which revisions they are at; with none heard, the release's one revision, if it has one.
      const shown = (list: readonly Behind[]) => {
        const lists = [...list.flatMap((b) => (b.target ? [ownRevisions(b.target)] : [])), ...startedMembers.revisions];
        return lists.length > 0 ? sharedRevision(lists) : releaseRevisions.size === 1 ? [...releaseRevisions][0] : undefined;
      };
      const at = (revision: string | undefined) => (revision !== undefined ? `at ${shortRevision(revision)}` : 'at their own revisions');
      if (confirmed.length === 0) {
        if (flagged?.stepProgress) flagged.stepProgress.unconfirmed = `step ${step} started before ${stepsText(earlierSteps)} seen Healthy ${at(shown(earlier))}`;
        continue;
      }
      const behindSteps = [...new Set(confirmed.map((b) => b.step))].sort((a, b) => a - b);
      const revision = shown(confirmed);
      const what = `step ${step} started before ${stepsText(behindSteps)} Healthy ${at(revision)}`;
      if (flagged) {
        flagged.status = 'Degraded';
        if (flagged.stepProgress) flagged.stepProgress.outOfOrder = what;
      }
      const named = [...confirmed].sort((a, b) => a.step - b.step).slice(0, MAX_NAMED);
      const reply = noticeReply(
        record,
        `appset-out-of-order:${key}:${step}`,
        'appset-out-of-order',
        {
          ...(revision !== undefined ? { revision } : {}),
          message: what,
          outOfOrder: {
            appSet: `${appSet.ref.cluster}/${appSet.ref.namespace}/${appSet.ref.name}`,
            startedStep: step,
            behindSteps,
            ...(revision !== undefined ? { revision } : {}),
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
