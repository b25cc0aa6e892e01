/**
 * The reducer: reduce(record, fact) → { record, effects }. Pure: time comes from the fact, and
 * everything else it needs from the context. It is right whatever the delivery does: stale
 * facts change nothing, older facts are ignored, repeated ones only refresh "last heard".
 */
import type {
  ApplicationFact,
  Fact,
  ReleaseAnnouncedFact,
  RolloutFact,
  TargetRef,
  WatchdogFact,
} from '../../facts/fact.js';
import { targetKey } from '../../facts/fact.js';
import { MAX_EVENTS, type ReduceContext } from './context.js';
import { pushBounded } from '../record/bounded-lists.js';
import { evaluate, expectsProgress, noticeReply } from './derive.js';
import { imageDrift, withNewRepositories } from '../record/images.js';
import { FINISHED_RELEASE_STATUSES, type Effect, type ReleaseEventKind, type ReleaseRecord, type StageState, type TargetState } from '../record/record.js';
import { alignStages, newRecord } from './record-factory.js';
import { compareObservations, compareSync } from '../record/versions.js';
import { pauseEnded } from './pause-end.js';
import { noteRolloutChange, noteStageFact } from './timeline.js';
import { applicationTargetFields, childPlacement, keepUnlisted, noteRevision, reduceApplicationSet } from './reduce-appset.js';
import { reduceSuperseded } from './reduce-superseded.js';
import { reduceRejection } from './reduce-rejection.js';
import { reduceKargo } from './reduce-kargo.js';
import { appLabelsField, noteMovedFrom } from './mixed-stage.js';
import { reduceRecheck } from './recheck.js';
import { editTarget } from '../record/target-edit.js';
import { putTarget } from '../record/target-writes.js';
import { stallReply } from './stall.js';
import type { ReduceKit, ReduceOutcome, Reduction } from './reduce-kit.js';


const unchanged = (outcome: ReduceOutcome, reason?: string): Reduction => ({ effects: [], outcome, reason });

export function reduce(current: ReleaseRecord | undefined, fact: Fact, ctx: ReduceContext): Reduction {
  return reduceFact(current, fact, { ...ctx, inPlace: false });
}

/**
 * The same, for a caller that owns `draft` (a batch reducing several facts of one release):
 * the draft is updated in place instead of copied. When the fact changes nothing, the draft is
 * left as it was.
 */
export function reduceDraft(draft: ReleaseRecord | undefined, fact: Fact, ctx: ReduceContext): Reduction {
  return reduceFact(draft, fact, { ...ctx, inPlace: true });
}

function reduceFact(current: ReleaseRecord | undefined, fact: Fact, options: ReduceContext): Reduction {
  // Read before anything may be updated in place.
  const ctx = { ...options, wasExpectingProgress: current !== undefined && expectsProgress(current.status) && current.stall === undefined };
  if (current && ctx.stage !== undefined && FINISHED_RELEASE_STATUSES.includes(current.status) && !current.stages.some((s) => s.name === ctx.stage)) {
    return unchanged('ignored', `stage ${ctx.stage} was added to the pipeline after release ${current.releaseId} ended`);
  }
  switch (fact.kind) {
    case 'rollout':
      return reduceRollout(current, fact, ctx);
    case 'application':
      return reduceApplication(current, fact, ctx);
    case 'application-set':
      return reduceApplicationSet(current, fact, ctx, KIT);
    case 'release':
      return reduceAnnouncement(current, fact, ctx);
    case 'watchdog':
      return fact.recheck ? reduceRecheck(current, fact, ctx, KIT) : reduceWatchdog(current, fact, ctx);
    case 'superseded':
      return reduceSuperseded(current, fact, ctx, KIT);
    case 'rejection':
      return reduceRejection(current, fact, ctx, KIT);
    case 'kargo-stage':
    case 'kargo-promotion':
    case 'kargo-freight':
      return reduceKargo(current, fact, ctx, KIT);
  }
}

/** What the reducers of ApplicationSet and Kargo facts share with this one. */
const KIT: ReduceKit = { unchanged, openRecord, hear, finish, addEvent };

function addEvent(record: ReleaseRecord, at: number, kind: ReleaseEventKind, detail: string, target?: string): void {
  pushBounded(record.events, { at, kind, detail, target }, MAX_EVENTS);
}

function findStage(record: ReleaseRecord, name: string | undefined): StageState | undefined {
  return record.stages.find((s) => s.name === name);
}

/** Marks the record as heard from at `now`, clearing a stall alert with a "heard again" reply. */
function hear(record: ReleaseRecord, now: number, effects: Effect[]): void {
  record.lastHeardAt = Math.max(record.lastHeardAt, now);
  if (record.stall) {
    const { alertedAt, silentSince } = record.stall;
    delete record.stall;
    addEvent(record, now, 'heard-again', `heard again after ${Math.round((now - silentSince) / 60_000)} min`);
    const reply = noticeReply(record, `heard-again:${alertedAt}`, 'heard-again', { silentSince });
    if (reply) effects.push(reply);
  }
}

/** Common tail: derive, collect replies, render, (re)arm the watchdog when progress is expected again. */
function finish(
  record: ReleaseRecord,
  now: number,
  ctx: ReduceContext,
  outcome: ReduceOutcome,
  extra: Effect[] = [],
): Reduction {
  const replies = evaluate(record, now, ctx);
  record.updatedAt = Math.max(record.updatedAt, now);
  const effects: Effect[] = [...extra, ...replies, { id: 'render', type: 'thread.render' }];
  if (expectsProgress(record.status) && record.stall === undefined && !ctx.wasExpectingProgress) {
    effects.push({ id: `watchdog:${record.lastHeardAt}`, type: 'watchdog.arm', dueAt: record.lastHeardAt + ctx.stallAfterMs });
  }
  return { record, effects, outcome };
}

/** The target ran another release before this fact: that release hears it moved on, and at which observation. */
function supersedePrevious(
  ctx: ReduceContext,
  record: ReleaseRecord,
  target: TargetRef,
  at: { generation?: number; resourceVersion?: string },
  effects: Effect[],
): void {
  const previous = ctx.previousReleaseOfTarget;
  if (previous === undefined || previous === record.releaseId) return;
  noteMovedFrom(record, previous);
  effects.push({ id: `supersede:${targetKey(target)}:${previous}`, type: 'release.supersede', releaseId: previous, target, at: { generation: at.generation, resourceVersion: at.resourceVersion } });
}

/** Heartbeat or repeated delivery: the same state again. Level-triggered: only "last heard" moves. */
function heartbeat(
  current: ReleaseRecord | undefined,
  record: ReleaseRecord,
  stage: StageState,
  target: TargetState,
  now: number,
  ctx: ReduceContext,
  effects: Effect[],
): Reduction {
  record.counters.duplicate += 1;
  editTarget(stage, target, { lastHeardAt: Math.max(target.lastHeardAt, now) });
  stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
  hear(record, now, effects);
  return finish(record, now, ctx, 'heartbeat', effects);
}

function openRecord(
  current: ReleaseRecord | undefined,
  ctx: ReduceContext,
  releaseId: string,
  idSource: ReleaseRecord['idSource'],
  images: string[],
  now: number,
): ReleaseRecord {
  if (!current) return newRecord(ctx.pipeline, releaseId, idSource, images, now);
  const record = ctx.inPlace ? current : structuredClone(current);
  alignStages(record, ctx.pipeline);
  return record;
}

function reduceRollout(current: ReleaseRecord | undefined, fact: RolloutFact, ctx: ReduceContext): Reduction {
  const obs = fact.rollout;
  // Rule A: before the controller observed this generation, phase and pod hash describe the past.
  if (!obs.observed) return unchanged('stale', `observedGeneration behind generation ${obs.generation}`);
  const now = fact.receivedAt;
  const record = openRecord(current, ctx, ctx.releaseId, ctx.idSource ?? 'images', obs.images, now);
  const stage = findStage(record, ctx.stage);
  if (!stage) return unchanged('ignored', `stage ${ctx.stage ?? '(none)'} is not in pipeline ${ctx.pipeline.name}`);
  const key = targetKey(fact.target);
  const prev = stage.targets[key];
  const sameObject = prev !== undefined && (prev.uid === undefined || prev.uid === obs.uid);
  const order = prev && sameObject ? compareObservations(obs, prev) : 1;
  const effects: Effect[] = [];
  if (prev?.supersededAt && sameObject && compareObservations(obs, prev.supersededAt) <= 0) {
    return unchanged('out-of-order', `target moved on to release ${prev.supersededBy ?? '?'} after this observation`);
  }

  if (order < 0) return unchanged('out-of-order', `generation ${obs.generation} rv ${obs.resourceVersion} is older than what was seen`);
  if (order === 0 && prev) return heartbeat(current, record, stage, prev, now, ctx, effects);

  const next: TargetState = {
    ref: fact.target,
    uid: obs.uid,
    generation: obs.generation,
    resourceVersion: obs.resourceVersion,
    podHash: obs.podHash,
    images: obs.images,
    phase: obs.phase,
    message: obs.message,
    pause: obs.pause,
    aborted: obs.aborted,
    step: obs.step,
    ...(obs.promoteFull ? { promoteFull: obs.promoteFull } : {}),
    weight: obs.weight,
    replicas: obs.replicas,
    restartedAt: obs.restartedAt,
    analysis: obs.analysis,
    application: obs.managedBy ?? prev?.application,
    ...appLabelsField(obs.labels),
    sync: prev?.sync,
    phaseSince: prev && prev.phase === obs.phase && sameObject ? prev.phaseSince : now,
    ...(prev?.healthyAt !== undefined && sameObject ? { healthyAt: prev.healthyAt } : {}),
    lastHeardAt: now,
  };

  record.counters.facts += 1;
  if (prev && sameObject) describeChange(record, prev, next, now, key);
  else if (!current) addEvent(record, now, 'created', `first seen on ${key}`, key);

  // Drift: the release id says one thing, the pod template runs another image (a manual patch,
  // an `undo` that selfHeal will revert). With no release id the images are the identity.
  if (record.idSource !== 'images') {
    const drift = imageDrift(record.images, obs.images);
    const text = drift.map((d) => `${d.observed} instead of ${d.expected}`).join('; ');
    const reply =
      drift.length > 0
        ? noticeReply(record, `drift:${key}:${obs.images.join(',')}`, 'drift', { message: text, images: obs.images, expectedImages: drift.map((d) => d.expected), generation: obs.generation }, stage.name, fact.target)
        : undefined;
    if (reply) {
      addEvent(record, now, 'drift', text, key);
      effects.push(reply);
    }
  }
  record.images = withNewRepositories(record.images, obs.images);

  putTarget(stage.targets, key, next);
  effects.push(...pauseEnded(record, stage.name, prev && sameObject ? prev : undefined, next, ctx));
  noteRolloutChange(stage, prev && sameObject ? prev : undefined, next, now, ctx);
  stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
  hear(record, now, effects);
  supersedePrevious(ctx, record, fact.target, obs, effects);
  return finish(record, now, ctx, 'applied', effects);
}

/** Rule B: a new pod hash under the same release id is not a new release; say what it was. */
function describeChange(record: ReleaseRecord, prev: TargetState, next: TargetState, now: number, key: string): void {
  if (prev.podHash !== next.podHash && prev.podHash !== undefined && next.podHash !== undefined) {
    if (prev.images.join(',') === next.images.join(',')) {
      addEvent(record, now, 'template-change', `pod template changed (${prev.podHash} → ${next.podHash}) with the same images`, key);
    }
    return;
  }
  if (prev.generation === next.generation) return;
  if (next.restartedAt !== prev.restartedAt || next.message === 'rollout is restarting') {
    addEvent(record, now, 'restart', 'pods restarted', key);
  } else if (next.replicas?.desired !== prev.replicas?.desired) {
    addEvent(record, now, 'scale', `scaled from ${prev.replicas?.desired ?? '?'} to ${next.replicas?.desired ?? '?'} replicas`, key);
  }
}

function applicationPhase(fact: ApplicationFact): { phase: TargetState['phase']; message: string } {
  const app = fact.application;
  const health = app.health?.status;
  if (app.operation && (app.operation.phase === 'Failed' || app.operation.phase === 'Error')) {
    return { phase: 'Degraded', message: app.operation.message ?? `sync ${app.operation.phase}` };
  }
  if (health === 'Degraded' || health === 'Missing') return { phase: 'Degraded', message: app.health?.message ?? health };
  if (health === 'Suspended') return { phase: 'Paused', message: app.health?.message ?? 'suspended' };
  if (health === 'Healthy' && app.syncStatus === 'Synced') return { phase: 'Healthy', message: '' };
  if (health === 'Unknown') return { phase: 'Unknown', message: app.health?.message ?? 'health unknown' };
  return { phase: 'Progressing', message: app.health?.message ?? `sync ${app.syncStatus ?? 'Unknown'}` };
}

function reduceApplication(current: ReleaseRecord | undefined, fact: ApplicationFact, ctx: ReduceContext): Reduction {
  const app = fact.application;
  const now = fact.receivedAt;
  const sync = app.operation
    ? {
        phase: app.operation.phase,
        message: app.operation.message,
        revision: app.operation.revision,
        startedAt: app.operation.startedAt,
        finishedAt: app.operation.finishedAt,
        retryCount: app.operation.retryCount,
        retryLimit: app.operation.retryLimit,
        runningHooks: app.operation.runningHooks,
      }
    : undefined;
  const stageConfig = ctx.pipeline.stages.find((s) => s.name === ctx.stage);
  if (!stageConfig) return unchanged('ignored', `stage ${ctx.stage ?? '(none)'} is not in pipeline ${ctx.pipeline.name}`);
  const placement = stageConfig.applicationSet ? childPlacement(current, stageConfig, fact, ctx.appSets) : undefined;
  if (placement?.kind === 'elsewhere') return unchanged('ignored', placement.reason);
  const record = openRecord(current, ctx, ctx.releaseId, ctx.idSource ?? 'images', [], now);
  const stage = findStage(record, ctx.stage) as StageState;
  const effects: Effect[] = [];

  if (stageConfig.rollouts) {
    // A Rollout stage: the Application only tells how its sync went (failures, hook-pinned syncs).
    const managed = Object.values(stage.targets).filter((t) => t.application === fact.target.name);
    if (managed.length === 0) return unchanged('ignored', `no target of ${stage.name} is managed by ${fact.target.name}`);
    const newer = managed.some((t) => t.sync === undefined || compareSync(sync, t.sync) > 0 || sync === undefined);
    if (!newer) {
      hear(record, now, effects);
      return finish(record, now, ctx, 'heartbeat', effects);
    }
    for (const t of managed) editTarget(stage, t, { sync });
    record.counters.facts += 1;
    hear(record, now, effects);
    return finish(record, now, ctx, 'applied', effects);
  }

  const key = targetKey(fact.target);
  const unlisted = placement?.kind === 'unlisted' ? placement.appSet : undefined;
  const prev = unlisted !== undefined ? record.unlistedChildren?.[key]?.target : stage.targets[key];
  const order = prev ? compareObservations(app, prev) : 1;
  if (prev?.supersededAt && compareObservations(app, prev.supersededAt) <= 0) {
    return unchanged('out-of-order', `target moved on to release ${prev.supersededBy ?? '?'} after this observation`);
  }
  if (order < 0) return unchanged('out-of-order', `resourceVersion ${app.resourceVersion ?? '?'} is older than what was seen`);
  if (order === 0 && prev && unlisted === undefined) return heartbeat(current, record, stage, prev, now, ctx, effects);
  if (order === 0 && prev) {
    // The same observation of a child kept aside (each step stage's route brings it once).
    record.counters.duplicate += 1;
    hear(record, now, effects);
    return finish(record, now, ctx, 'heartbeat', effects);
  }
  const { phase, message } = applicationPhase(fact);
  const fields = applicationTargetFields(fact);
  record.counters.facts += 1;
  if (stageConfig.applicationSet) noteRevision(record, fact);
  const target: TargetState = {
    ref: fact.target,
    uid: app.uid,
    generation: app.generation,
    resourceVersion: app.resourceVersion,
    images: app.images ?? prev?.images ?? [],
    phase,
    message,
    aborted: false,
    application: fact.target.name,
    ...appLabelsField(app.labels),
    sync,
    ...fields,
    phaseSince: prev && prev.phase === phase ? prev.phaseSince : now,
    // The latch holds at one revision: a child compared against another one starts again.
    ...(prev?.healthyAt !== undefined && prev.revision === fields.revision && String(prev.revisions) === String(fields.revisions) ? { healthyAt: prev.healthyAt } : {}),
    lastHeardAt: now,
  };
  if (unlisted !== undefined) keepUnlisted(record, key, unlisted, target);
  else {
    putTarget(stage.targets, key, target);
    stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
    noteStageFact(stage, now);
  }
  hear(record, now, effects);
  supersedePrevious(ctx, record, fact.target, app, effects);
  return finish(record, now, ctx, 'applied', effects);
}

function reduceAnnouncement(current: ReleaseRecord | undefined, fact: ReleaseAnnouncedFact, ctx: ReduceContext): Reduction {
  const now = fact.receivedAt;
  const record = openRecord(current, ctx, fact.releaseId, 'announcement', fact.images, now);
  const before = JSON.stringify([record.images, record.commit, record.pullRequestUrl, record.author, record.authorSlackId, record.mergedBySlackId, record.idSource, record.announcedAs]);
  if (fact.releaseId !== record.releaseId) record.announcedAs = fact.releaseId; // announced into a Freight's release (kargo-announce.ts)
  // CI is the authority on what the release should run.
  if (fact.images.length > 0) record.images = [...fact.images].sort();
  if (record.idSource === 'images') record.idSource = 'announcement';
  record.commit = fact.commit ?? record.commit;
  record.pullRequestUrl = fact.pullRequestUrl ?? record.pullRequestUrl;
  record.author = fact.author ?? record.author;
  if (fact.authorSlackId) record.authorSlackId = fact.authorSlackId;
  if (fact.mergedBySlackId) record.mergedBySlackId = fact.mergedBySlackId;
  const after = JSON.stringify([record.images, record.commit, record.pullRequestUrl, record.author, record.authorSlackId, record.mergedBySlackId, record.idSource, record.announcedAs]);
  if (current && before === after) return unchanged('ignored', 'release already announced with the same details');
  return finish(record, now, ctx, 'applied');
}

function reduceWatchdog(current: ReleaseRecord | undefined, fact: WatchdogFact, ctx: ReduceContext): Reduction {
  if (!current) return unchanged('ignored', 'release no longer exists');
  if (!expectsProgress(current.status)) return unchanged('ignored', `release is ${current.status}`);
  if (current.stall) return unchanged('ignored', 'stall already reported');
  if (current.lastHeardAt > fact.silentSince) return unchanged('ignored', 'heard from since the watchdog was armed');
  if (fact.receivedAt - current.lastHeardAt < ctx.stallAfterMs) return unchanged('ignored', 'not silent long enough');
  const record = openRecord(current, ctx, current.releaseId, current.idSource, current.images, fact.receivedAt);
  record.stall = { alertedAt: fact.receivedAt, silentSince: current.lastHeardAt };
  addEvent(record, fact.receivedAt, 'stall', `nothing heard for ${Math.round((fact.receivedAt - current.lastHeardAt) / 60_000)} min`);
  const stall = stallReply(record, ctx, current.lastHeardAt);
  const reply = noticeReply(record, `stall:${current.lastHeardAt}`, 'stall', stall.detail, stall.stage, stall.ref);
  // The stall is set, so finish() does not arm the watchdog again: the next fact will.
  return finish(record, fact.receivedAt, ctx, 'applied', reply ? [reply] : []);
}
