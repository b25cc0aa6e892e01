/**
 * The reducer worker: for each fact, find its pipeline stages and release, reduce under
 * compare-and-set, then hand the saved effects to their queues. Effects are saved with the
 * record first (an outbox), so a worker killed between the two steps loses nothing: the retry
 * dispatches what the first attempt saved, and effect ids make the second dispatch harmless.
 */
import { type ConfigFile } from '../../config/file.js';
import { stallAfterMs } from '../../config/durations.js';
import type { Fact, KargoFact } from '../../facts/fact.js';
import { targetKey } from '../../facts/fact.js';
import type { FactQueue } from '../../facts/fact-queue.js';
import { partitionOfPipeline } from '../../routing/partitions.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { KnownAppSets, KnownTarget, ReduceContext } from '../reduce/context.js';
import { appLabelsOfFact } from '../reduce/mixed-stage.js';
import { FencedWriteError, oldestFence, type Fence } from '../store/fence.js';
import type { ThreadEffect, ThreadEffectSink } from '../store/ports.js';
import { reduceDraft } from '../reduce/reduce.js';
import type { ReduceOutcome } from '../reduce/reduce-kit.js';
import type { Effect, ReleaseRecord } from '../record/record.js';
import { routeFact } from '../../routing/route.js';
import { appSetRouteInputs, type AppSetMemberships } from '../store/appset-memberships.js';
import { isKargoRemoval, resolveKargoRoutes } from '../../routing/kargo-route-hints.js';
import { kargoRouteHints, noteUnplacedStage, type AnnouncedImages } from '../store/kargo-index.js';
import { screenKargoBatch } from '../store/kargo-tombstones.js';
import type { KargoSeen } from '../store/target-index.js';
import { announcementRoutes } from './kargo-announce.js';
import type { AppSetRollouts } from './appset-rollouts.js';
import type { OwnAction } from '../reduce/own-action-keys.js';
import type { OwnActions } from '../store/own-actions.js';
import type { AnalysisRunReader } from '../../kube/analysis-runs.js';
import type { PromoteFreightResolver } from './promote-freight.js';
import type { ReleaseStore, StoredRelease } from '../store/store.js';
import { indexesByLane, ReleaseLanes } from './release-lanes.js';
import { NO_WAIT, type Turn } from './turns-in-order.js';
import type { TargetEntry, TargetIndex } from '../store/target-index.js';
import type { Watchdog } from './watchdog.js';
import { ownedTarget, resolveRoutes } from './resolve-routes.js';
import type { ResolvedRoute, RoutedFact } from '../../routing/route-types.js';
import { deliveryNotes } from './delivery-events.js';
import type { DeliveryStats } from '../store/delivery-stats.js';

export interface FactReducerDeps {
  config: ConfigFile;
  store: ReleaseStore;
  targets: TargetIndex;
  facts: FactQueue;
  watchdog: Watchdog;
  threads: ThreadEffectSink;
  metrics: Metrics;
  logger: Logger;
  /** Fact partitions (FACT_PARTITIONS); a route of a pipeline in another partition is forwarded there. */
  partitions?: number;
  /** Glidepath's own actions (optional: without it no change is called "outside Glidepath"). */
  ownActions?: OwnActions;
  /** Reads the failing metrics of a failed analysis into its fact (optional). */
  analysisRuns?: Pick<AnalysisRunReader, 'enrich'>;
  /** The releases CI announced, by images: a Kargo Freight with the same images joins one (optional). */
  announcedImages?: AnnouncedImages;
  /** The latest step membership of each ApplicationSet, kept beside the records (optional: without it a release learns it from ApplicationSet facts alone). */
  appSetMemberships?: AppSetMemberships;
  /** The rollouts of each ApplicationSet whose children carry no release id: one thread per rollout (optional: without it, a thread per revision). */
  appSetRollouts?: AppSetRollouts;
  /** Puts the Freight a Promote button is shown for on stage-healthy replies (optional). */
  promoteFreight?: Pick<PromoteFreightResolver, 'enrich'>;
  /** The daily delivery roll-ups the App Home and /glidepath stats read (optional: without it nothing is counted). */
  delivery?: Pick<DeliveryStats, 'note'>;
}

/** Where a fact job came from: its partition, and for a forwarded fact the one pipeline it is for. */
export interface FactOrigin {
  partition: number;
  pipeline?: string;
  /** The partition lease the job is worked under (absent: no lease, e.g. tests driving the reducer). */
  fence?: Fence;
}

export interface BatchStep {
  /** The record after the batch (undefined when there was none and no fact made one). */
  record: ReleaseRecord | undefined;
  /** Whether any fact applied or was a heartbeat: only then is the record saved. */
  changed: boolean;
  /** Effects to save with the record (its outbox); a later effect with the same id replaces an earlier one. */
  effects: Effect[];
  outcomes: ReduceOutcome[];
  /** Why facts changed nothing, for the debug log. */
  reasons: { outcome: ReduceOutcome; reason: string }[];
  /** What the pipeline has seen of the batch's Kargo Stages after it (removals are tombstones: kargo-tombstones.ts). */
  kargoSeen: Map<string, KargoSeen>;
}

/**
 * The worker's pure step: facts of one release, reduced in arrival order against the record
 * as read. `current` is updated in place (the worker parsed it for this attempt alone; callers
 * that keep it elsewhere pass a copy). `previousOfTarget` is each owned target's release before
 * the batch; `knownTargets` the stage's targets heard recently, both from the target index.
 */
export function reduceReleaseBatch(
  current: ReleaseRecord | undefined,
  items: readonly RoutedFact[],
  input: { config: ConfigFile; knownTargets: Record<string, string[]>; targetReleases?: ReadonlyMap<string, KnownTarget>; previousOfTarget: ReadonlyMap<string, string>; ownActions?: Record<string, readonly OwnAction[]>; kargoSeen?: ReadonlyMap<string, KargoSeen>; appSets?: KnownAppSets },
): BatchStep {
  const { config } = input;
  const { settings } = config;
  const first = items[0] as RoutedFact;
  const pipeline = first.route.pipeline;
  const releaseId = first.route.releaseId;
  const base = {
    pipeline,
    releaseId,
    stallAfterMs: stallAfterMs(config, pipeline),
    clusterFacts: Object.fromEntries(config.clusters.map((c) => [c.name, c.facts])),
    unhealthyGraceMs: settings.unhealthyGraceMinutes * 60_000,
    hookPinnedAfterMs: settings.hookPinnedAfterMinutes * 60_000,
  };
  let record = current;
  // Read now: the batch updates `current` in place.
  const statusBefore = current?.status;
  const effects = new Map<string, Effect>();
  const outcomes: ReduceOutcome[] = [];
  const reasons: BatchStep['reasons'] = [];
  const previousOfTarget = new Map(input.previousOfTarget);
  // A Kargo Stage's removal holds against older observations of it, in every release alike.
  const screen = screenKargoBatch(items.map((item) => ({ ...item, key: ownedTarget(item) })), input.kargoSeen ?? new Map(), input.knownTargets);
  const { knownTargets } = screen;
  for (const [i, item] of items.entries()) {
    const refused = screen.refused[i];
    if (refused) {
      outcomes.push('out-of-order');
      reasons.push({ outcome: 'out-of-order', reason: refused });
      continue;
    }
    const target = ownedTarget(item);
    const ctx: ReduceContext = {
      ...base,
      stage: item.route.stage?.name,
      idSource: item.route.idSource,
      previousReleaseOfTarget: target ? previousOfTarget.get(target) : undefined,
      knownTargets,
      ...(input.targetReleases ? { targetReleases: input.targetReleases } : {}),
      ...(input.ownActions ? { ownActions: input.ownActions } : {}),
      ...(input.appSets ? { appSets: input.appSets } : {}),
    };
    const reduction = reduceDraft(record, item.fact, ctx);
    outcomes.push(reduction.outcome);
    if (reduction.reason && reduction.outcome !== 'applied' && reduction.outcome !== 'heartbeat') reasons.push({ outcome: reduction.outcome, reason: reduction.reason });
    if (!reduction.record) continue;
    record = reduction.record;
    if (target) previousOfTarget.set(target, releaseId);
    // Later effects with the same id replace earlier ones (one render, the latest watchdog due time).
    for (const e of reduction.effects) {
      const key = e.type === 'watchdog.arm' ? 'watchdog' : e.id;
      effects.delete(key);
      effects.set(key, e);
    }
  }
  const changed = outcomes.some((o) => o === 'applied' || o === 'heartbeat');
  if (changed && record) for (const note of deliveryNotes(statusBefore, record, current === undefined)) effects.set(note.id, note);
  return { record, changed, effects: [...effects.values()], outcomes, reasons, kargoSeen: screen.seen };
}

/**
 * What the target index learns from a saved batch: each owned target's release (a Kargo Stage with
 * what was last seen of it; one that left, a tombstone), and which Applications manage which stages.
 */
export function targetIndexUpdates(
  items: readonly RoutedFact[],
  outcomes: readonly ReduceOutcome[],
  kargoSeen: ReadonlyMap<string, KargoSeen> = new Map(),
): { targets: [string, TargetEntry][]; applications: Map<string, { pipeline: string; stage: string; releaseId: string }>; removed: [string, TargetEntry][] } {
  const targets: [string, TargetEntry][] = [];
  const removed: [string, TargetEntry][] = [];
  const applications = new Map<string, { pipeline: string; stage: string; releaseId: string }>();
  items.forEach((item, i) => {
    const { fact, route } = item;
    const outcome = outcomes[i];
    const target = ownedTarget(item);
    const seen = target ? kargoSeen.get(target) : undefined;
    // A removal that counts leaves a tombstone, whether or not this release held the Stage.
    if (route.stage && target && isKargoRemoval(fact) && outcome !== 'out-of-order' && seen?.removed) removed.push([target, { stage: route.stage.name, releaseId: '', heardAt: fact.receivedAt, kargo: seen }]);
    if (!route.stage || (outcome !== 'applied' && outcome !== 'heartbeat') || isKargoRemoval(fact)) return;
    if (target) targets.push([target, { stage: route.stage.name, releaseId: route.releaseId, heardAt: fact.receivedAt, ...appLabelsOfFact(fact), ...(seen && !seen.removed ? { kargo: seen } : {}) }]);
    if (fact.kind === 'rollout' && fact.rollout.managedBy && outcome === 'applied') {
      applications.set(`${fact.target.cluster}/${fact.rollout.managedBy}`, { pipeline: route.pipeline.name, stage: route.stage.name, releaseId: route.releaseId });
    }
  });
  return { targets, applications, removed };
}

/** The lane of a route's release (release-lanes.ts). */
const laneKey = (route: ResolvedRoute): string => `${route.pipeline.name}\n${route.releaseId}`;

export interface FactResult {
  routes: number;
  outcomes: ReduceOutcome[];
}

export class FactReducer {
  constructor(private readonly deps: FactReducerDeps) {}

  private async routes(fact: Fact, placement: Turn): Promise<ResolvedRoute[]> {
    if (fact.kind === 'kargo-stage' || fact.kind === 'kargo-promotion' || fact.kind === 'kargo-freight') return this.kargoRoutes(fact);
    if (fact.kind === 'release' && this.deps.announcedImages) return announcementRoutes(fact, resolveRoutes(this.deps.config, fact), this.deps.announcedImages, this.deps.store, this.deps.appSetRollouts);
    const managed = fact.kind === 'application' ? await this.deps.targets.routesOfApplication(`${fact.target.cluster}/${fact.target.name}`) : [];
    const { children, known } = await appSetRouteInputs(this.deps.config, fact, this.deps.targets, this.deps.appSetMemberships);
    const routes = resolveRoutes(this.deps.config, fact, managed, children, {}, known);
    return fact.kind === 'application' && this.deps.appSetRollouts ? this.deps.appSetRollouts.place(fact, routes, placement) : routes;
  }

  /** Kargo routes, with the announced release of the Freight's images and the release in flight; a Stage no release can take yet is still known to its stage. */
  private async kargoRoutes(fact: KargoFact): Promise<ResolvedRoute[]> {
    const routes = routeFact(this.deps.config, fact);
    if (!this.deps.announcedImages) return resolveKargoRoutes(routes, {}).routes;
    const { routes: resolved, unplaced } = resolveKargoRoutes(routes, await kargoRouteHints(fact, routes, this.deps.announcedImages, this.deps.store));
    if (fact.kind === 'kargo-stage') for (const r of unplaced) await noteUnplacedStage(this.deps.targets, r, fact);
    return resolved;
  }

  async process(queued: Fact, origin: FactOrigin = { partition: 0 }): Promise<FactResult> {
    // Taken before the first await: in the order the facts are handed in (appset-rollouts.ts).
    const placement = this.deps.appSetRollouts?.turnOf(queued) ?? NO_WAIT;
    try {
      return await this.reduceFact(queued, origin, placement);
    } finally {
      placement.done();
    }
  }

  private async reduceFact(queued: Fact, origin: FactOrigin, placement: Turn): Promise<FactResult> {
    const started = performance.now();
    const fact = this.deps.analysisRuns ? await this.deps.analysisRuns.enrich(queued) : queued;
    let routes = await this.routes(fact, placement);
    if (origin.pipeline !== undefined) routes = routes.filter((r) => r.pipeline.name === origin.pipeline);
    if (routes.length === 0) {
      if (origin.pipeline === undefined) this.deps.metrics.factsUnmatched.inc({ source: fact.source });
      return { routes: 0, outcomes: [] };
    }
    routes = await this.forwardForeign(fact, routes, origin.partition);
    // Routes of one release (a child placed in every step stage before its ApplicationSet was
    // heard) are reduced in one batch: one read and one save of the record, not one per stage.
    const outcomes: ReduceOutcome[] = new Array<ReduceOutcome>(routes.length);
    for (const [key, at] of indexesByLane(routes, laneKey)) {
      const items = at.map((i) => ({ fact, route: routes[i] as ResolvedRoute, ...(origin.fence ? { fence: origin.fence } : {}) }));
      (await this.lanes.submitAll(key, items)).forEach((outcome, j) => (outcomes[at[j] as number] = outcome));
    }
    this.deps.metrics.reducerSeconds.observe({ kind: fact.kind }, (performance.now() - started) / 1000);
    return { routes: routes.length, outcomes };
  }

  /**
   * Routes of pipelines another partition owns go there (one job per pipeline, deduplicated by
   * id), so every release is reduced only by the replica holding its pipeline's partition.
   */
  private async forwardForeign(fact: Fact, routes: ResolvedRoute[], partition: number): Promise<ResolvedRoute[]> {
    const k = this.deps.partitions ?? 1;
    if (k <= 1) return routes;
    const local: ResolvedRoute[] = [];
    const foreign = new Set<string>();
    for (const route of routes) {
      if (partitionOfPipeline(route.pipeline.name, k) === partition) local.push(route);
      else foreign.add(route.pipeline.name);
    }
    for (const pipeline of foreign) await this.deps.facts.forward(fact, pipeline);
    return local;
  }

  private readonly lanes = new ReleaseLanes<RoutedFact & { fence?: Fence }, ReduceOutcome>((_key, items) => this.fenced(items));

  /** A write refused by the fence is told at warn and counted: this process lost its lease while the job was in hand. */
  private async fenced(items: (RoutedFact & { fence?: Fence })[]): Promise<ReduceOutcome[]> {
    const fence = oldestFence(items.map((i) => i.fence));
    try {
      return await this.reduceBatch(items, fence);
    } catch (err) {
      if (err instanceof FencedWriteError) {
        this.deps.metrics.fencedWrites.inc({ what: err.what });
        const first = items[0] as RoutedFact;
        this.deps.logger.warn({ pipeline: first.route.pipeline.name, releaseId: first.route.releaseId, epoch: err.epoch, what: err.what }, `fenced: ${err.message}`);
      }
      throw err;
    }
  }

  /** Facts of one release, reduced in arrival order under one compare-and-set. */
  private async reduceBatch(items: RoutedFact[], fence: Fence | undefined): Promise<ReduceOutcome[]> {
    const first = items[0] as RoutedFact;
    const pipeline = first.route.pipeline;
    const releaseId = first.route.releaseId;
    const now = Math.max(...items.map((i) => i.fact.receivedAt));
    const owned = [...new Set(items.map(ownedTarget).filter((t): t is string => t !== undefined))];
    const rolloutTargets = [...new Set(items.flatMap((i) => (i.fact.kind === 'rollout' ? [targetKey(i.fact.target)] : [])))];
    const [[knownTargets, targetReleases], { releases: previousOfTarget, kargo: kargoSeen }, ownActions, appSets] = await Promise.all([
      this.deps.targets.knownTargets(pipeline.name, now).then(async (known) => [known, await this.deps.targets.knownTargetReleases(pipeline.name, now)] as const),
      this.deps.targets.ownedOf(pipeline.name, owned),
      // What Glidepath itself did to these Rollouts: the thread tells it from changes made outside.
      this.deps.ownActions ? this.deps.ownActions.of(rolloutTargets) : Promise.resolve(undefined),
      this.deps.appSetMemberships?.of(pipeline),
    ]);

    let leftover: StoredRelease | undefined;
    let seen: ReadonlyMap<string, KargoSeen> = kargoSeen;
    const { saved, result: outcomes } = await this.deps.store.update(pipeline.name, releaseId, (current) => {
      leftover = current;
      const step = reduceReleaseBatch(current?.record, items, { config: this.deps.config, knownTargets, targetReleases, previousOfTarget, kargoSeen, ...(ownActions ? { ownActions } : {}), ...(appSets ? { appSets } : {}) });
      for (const r of step.reasons) this.deps.logger.debug({ pipeline: pipeline.name, releaseId, ...r }, 'fact changed nothing');
      seen = step.kargoSeen;
      // No fact applied: the batch left `current` as it was (reduceDraft), still what Redis holds.
      return { next: step.changed ? step.record : undefined, untouched: !step.changed, outbox: step.effects, result: step.outcomes };
    }, fence ? { fence: fence.epoch } : {});
    items.forEach((item, i) => this.deps.metrics.factsReduced.inc({ source: item.fact.source, outcome: outcomes[i] as string }));

    const updates = targetIndexUpdates(items, outcomes, seen);
    // A removal's tombstone is written even when no release changed (none held the Stage).
    await this.deps.targets.recordMany(pipeline.name, saved ? [...updates.targets, ...updates.removed] : updates.removed);
    if (saved && !leftover && saved.record.idSource === 'freight') await this.deps.announcedImages?.noteFreightRelease(pipeline.name, items.map((i) => i.fact), releaseId);
    if (saved) {
      for (const [application, where] of updates.applications) await this.deps.targets.recordApplication(application, where);
    }
    const stored = saved ?? leftover;
    if (stored && stored.outbox.length > 0) {
      // Effects go out only while the lease is held: a job that woke after a takeover leaves the
      // outbox to the new holder, which dispatches it with the next fact of the release (the
      // retried job is one). Checked locally: no round trip in the steady state (PartitionLeases.holds).
      if (fence && !(await fence.holds())) throw new FencedWriteError('dispatch', `${pipeline.name}/${releaseId}`, fence.epoch);
      await this.dispatch(stored.record, stored.outbox);
    }
    return outcomes;
  }

  private async dispatch(record: ReleaseRecord, outbox: Effect[]): Promise<void> {
    const thread: ThreadEffect[] = [];
    // Queued together, so a release that supersedes many targets adds one job of facts, not one each.
    const superseded: Promise<string>[] = [];
    for (const effect of outbox) {
      switch (effect.type) {
        case 'thread.render':
        case 'thread.reply':
        case 'thread.settle':
          thread.push(effect);
          if (effect.type === 'thread.reply' && effect.kind === 'stall') this.deps.metrics.stallAlerts.inc({ pipeline: record.pipeline });
          break;
        case 'watchdog.arm':
          await this.deps.watchdog.arm(record.pipeline, record.releaseId, effect.dueAt);
          break;
        case 'release.recheck':
          await this.deps.watchdog.recheck(record.pipeline, record.releaseId, effect.dueAt);
          break;
        case 'delivery.note':
          await this.deps.delivery?.note(record.pipeline, record.releaseId, effect);
          break;
        case 'release.supersede':
          superseded.push(this.deps.facts.add({
            kind: 'superseded',
            source: 'internal',
            receivedAt: record.updatedAt,
            pipeline: record.pipeline,
            releaseId: effect.releaseId,
            target: effect.target,
            byReleaseId: record.releaseId,
            at: effect.at,
          }));
          break;
      }
    }
    await Promise.all(superseded);
    if (thread.length > 0) await this.deps.threads.send(record, this.deps.promoteFreight ? await this.deps.promoteFreight.enrich(record, thread) : thread);
    await this.deps.store.clearOutbox(record.pipeline, record.releaseId, outbox);
  }
}
