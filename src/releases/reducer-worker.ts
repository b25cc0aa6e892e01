/**
 * The reducer worker: for each fact, find its pipeline stages and release, reduce under
 * compare-and-set, then hand the saved effects to their queues. Effects are saved with the
 * record first (an outbox), so a worker killed between the two steps loses nothing: the retry
 * dispatches what the first attempt saved, and effect ids make the second dispatch harmless.
 */
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { stallAfterMs, type ConfigFile, type PipelineConfig, type StageConfig } from '../config/file.js';
import type { Fact } from '../facts/fact.js';
import { targetKey } from '../facts/fact.js';
import { FACTS_QUEUE, type FactQueue } from '../facts/fact-queue.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { ReduceContext } from './context.js';
import type { ThreadEffect, ThreadEffectSink } from './ports.js';
import { reduceDraft, type ReduceOutcome } from './reduce.js';
import type { Effect, ReleaseRecord } from './record.js';
import { routeFact } from './route.js';
import type { ReleaseStore, StoredRelease } from './store.js';
import { ReleaseLanes } from './release-lanes.js';
import type { TargetIndex } from './target-index.js';
import type { Watchdog } from './watchdog.js';

export interface FactReducerDeps {
  config: ConfigFile;
  store: ReleaseStore;
  targets: TargetIndex;
  facts: FactQueue;
  watchdog: Watchdog;
  threads: ThreadEffectSink;
  metrics: Metrics;
  logger: Logger;
}

interface ResolvedRoute {
  pipeline: PipelineConfig;
  stage?: StageConfig;
  releaseId: string;
  idSource?: 'annotation' | 'images';
}

export interface FactResult {
  routes: number;
  outcomes: ReduceOutcome[];
}

export class FactReducer {
  constructor(private readonly deps: FactReducerDeps) {}

  private pipeline(name: string): PipelineConfig | undefined {
    return this.deps.config.pipelines.find((p) => p.name === name);
  }

  private async routes(fact: Fact): Promise<ResolvedRoute[]> {
    switch (fact.kind) {
      case 'rollout':
        return routeFact(this.deps.config, fact);
      case 'application': {
        const direct: ResolvedRoute[] = routeFact(this.deps.config, fact);
        const managed = await this.deps.targets.routesOfApplication(`${fact.target.cluster}/${fact.target.name}`);
        for (const m of managed) {
          const pipeline = this.pipeline(m.pipeline);
          const stage = pipeline?.stages.find((s) => s.name === m.stage);
          if (pipeline && stage?.rollouts && stage.cluster === fact.target.cluster) direct.push({ pipeline, stage, releaseId: m.releaseId });
        }
        return direct;
      }
      case 'release':
      case 'watchdog':
      case 'superseded': {
        const pipeline = this.pipeline(fact.pipeline);
        return pipeline ? [{ pipeline, releaseId: fact.releaseId }] : [];
      }
    }
  }

  async process(fact: Fact): Promise<FactResult> {
    const started = performance.now();
    const routes = await this.routes(fact);
    if (routes.length === 0) {
      this.deps.metrics.factsUnmatched.inc({ source: fact.source });
      return { routes: 0, outcomes: [] };
    }
    const outcomes: ReduceOutcome[] = [];
    for (const route of routes) outcomes.push(await this.processRoute(fact, route));
    this.deps.metrics.reducerSeconds.observe({ kind: fact.kind }, (performance.now() - started) / 1000);
    return { routes: routes.length, outcomes };
  }

  private readonly lanes = new ReleaseLanes<{ fact: Fact; route: ResolvedRoute }, ReduceOutcome>((_key, items) => this.reduceBatch(items));

  private processRoute(fact: Fact, route: ResolvedRoute): Promise<ReduceOutcome> {
    return this.lanes.submit(`${route.pipeline.name}\n${route.releaseId}`, { fact, route });
  }

  /** Facts of one release, reduced in arrival order under one compare-and-set. */
  private async reduceBatch(items: { fact: Fact; route: ResolvedRoute }[]): Promise<ReduceOutcome[]> {
    const { settings } = this.deps.config;
    const first = items[0] as { fact: Fact; route: ResolvedRoute };
    const pipeline = first.route.pipeline;
    const releaseId = first.route.releaseId;
    const now = Math.max(...items.map((i) => i.fact.receivedAt));
    // The target a fact reports on, when it is one of the stage's targets (an Application fact on a
    // Rollout stage only tells about the sync of targets that are Rollouts).
    const owned = items.map(({ fact, route }) =>
      (fact.kind === 'rollout' || fact.kind === 'application') && route.stage && (fact.kind === 'rollout' || !route.stage.rollouts) ? targetKey(fact.target) : undefined,
    );
    const targets = [...new Set(owned.filter((t): t is string => t !== undefined))];
    const base = {
      pipeline,
      releaseId,
      stallAfterMs: stallAfterMs(this.deps.config, pipeline),
      unhealthyGraceMs: settings.unhealthyGraceMinutes * 60_000,
      hookPinnedAfterMs: settings.hookPinnedAfterMinutes * 60_000,
    };
    const [knownTargets, previous] = await Promise.all([
      this.deps.targets.knownTargets(pipeline.name, now),
      this.deps.targets.releasesOf(pipeline.name, targets),
    ]);

    let leftover: StoredRelease | undefined;
    const { saved, result: outcomes } = await this.deps.store.update(pipeline.name, releaseId, (current) => {
      leftover = current;
      let record = current?.record;
      const effects = new Map<string, Effect>();
      const results: ReduceOutcome[] = [];
      const previousOfTarget = new Map(previous);
      items.forEach(({ fact, route }, i) => {
        const target = owned[i];
        const ctx: ReduceContext = {
          ...base,
          stage: route.stage?.name,
          idSource: route.idSource,
          previousReleaseOfTarget: target ? previousOfTarget.get(target) : undefined,
          knownTargets,
        };
        // `record` was parsed for this attempt alone, so it may be updated in place.
        const reduction = reduceDraft(record, fact, ctx);
        results.push(reduction.outcome);
        if (reduction.reason && reduction.outcome !== 'applied' && reduction.outcome !== 'heartbeat') {
          this.deps.logger.debug({ pipeline: pipeline.name, releaseId, outcome: reduction.outcome, reason: reduction.reason }, 'fact changed nothing');
        }
        if (!reduction.record) return;
        record = reduction.record;
        if (target) previousOfTarget.set(target, releaseId);
        // Later effects with the same id replace earlier ones (one render, the latest watchdog due time).
        for (const e of reduction.effects) {
          const key = e.type === 'watchdog.arm' ? 'watchdog' : e.id;
          effects.delete(key);
          effects.set(key, e);
        }
      });
      const changed = results.some((o) => o === 'applied' || o === 'heartbeat');
      return { next: changed ? record : undefined, outbox: [...effects.values()], result: results };
    });
    items.forEach((item, i) => this.deps.metrics.factsReduced.inc({ source: item.fact.source, outcome: outcomes[i] as string }));

    if (saved) {
      const entries: [string, { stage: string; releaseId: string; heardAt: number }][] = [];
      const applications = new Map<string, { pipeline: string; stage: string; releaseId: string }>();
      items.forEach(({ fact, route }, i) => {
        const outcome = outcomes[i];
        if (!route.stage || (outcome !== 'applied' && outcome !== 'heartbeat')) return;
        const target = owned[i];
        if (target) entries.push([target, { stage: route.stage.name, releaseId, heardAt: fact.receivedAt }]);
        if (fact.kind === 'rollout' && fact.rollout.managedBy && outcome === 'applied') {
          applications.set(`${fact.target.cluster}/${fact.rollout.managedBy}`, { pipeline: pipeline.name, stage: route.stage.name, releaseId });
        }
      });
      await this.deps.targets.recordMany(pipeline.name, entries);
      for (const [application, where] of applications) await this.deps.targets.recordApplication(application, where);
    }
    const stored = saved ?? leftover;
    if (stored && stored.outbox.length > 0) await this.dispatch(stored.record, stored.outbox);
    return outcomes;
  }

  private async dispatch(record: ReleaseRecord, outbox: Effect[]): Promise<void> {
    const thread: ThreadEffect[] = [];
    for (const effect of outbox) {
      switch (effect.type) {
        case 'thread.render':
        case 'thread.reply':
          thread.push(effect);
          if (effect.type === 'thread.reply' && effect.kind === 'stall') this.deps.metrics.stallAlerts.inc({ pipeline: record.pipeline });
          break;
        case 'watchdog.arm':
          await this.deps.watchdog.arm(record.pipeline, record.releaseId, effect.dueAt);
          break;
        case 'release.supersede':
          await this.deps.facts.add({
            kind: 'superseded',
            source: 'internal',
            receivedAt: record.updatedAt,
            pipeline: record.pipeline,
            releaseId: effect.releaseId,
            target: effect.target,
            byReleaseId: record.releaseId,
            at: effect.at,
          });
          break;
      }
    }
    if (thread.length > 0) await this.deps.threads.send(record, thread);
    await this.deps.store.clearOutbox(record.pipeline, record.releaseId, outbox);
  }
}

export function startReducerWorker(
  reducer: FactReducer,
  options: { connection: Redis; prefix: string; concurrency: number; logger: Logger; lockDurationMs?: number },
): Worker<Fact> {
  const worker = new Worker<Fact>(FACTS_QUEUE, async (job: Job<Fact>) => reducer.process(job.data), {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.lockDurationMs ?? 30_000,
    // A fact whose worker died twice is still retried: the reducer is idempotent.
    maxStalledCount: 3,
  });
  worker.on('failed', (job, err) => options.logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'fact failed; BullMQ retries it'));
  worker.on('error', (err) => options.logger.error({ err }, 'reducer worker error'));
  return worker;
}
