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
import { reduce, type ReduceOutcome, type Reduction } from './reduce.js';
import type { Effect, ReleaseRecord } from './record.js';
import { routeFact } from './route.js';
import type { ReleaseStore, StoredRelease } from './store.js';
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

  private async processRoute(fact: Fact, route: ResolvedRoute): Promise<ReduceOutcome> {
    const { settings } = this.deps.config;
    const pipelineName = route.pipeline.name;
    const isClusterFact = fact.kind === 'rollout' || fact.kind === 'application';
    const target = isClusterFact ? targetKey(fact.target) : undefined;
    const [knownTargets, previousReleaseOfTarget] = await Promise.all([
      this.deps.targets.knownTargets(pipelineName, fact.receivedAt),
      target && route.stage && (fact.kind === 'rollout' || !route.stage.rollouts) ? this.deps.targets.releaseOf(pipelineName, target) : undefined,
    ]);
    const ctx: ReduceContext = {
      pipeline: route.pipeline,
      releaseId: route.releaseId,
      stage: route.stage?.name,
      idSource: route.idSource,
      previousReleaseOfTarget,
      knownTargets,
      stallAfterMs: stallAfterMs(this.deps.config, route.pipeline),
      unhealthyGraceMs: settings.unhealthyGraceMinutes * 60_000,
      hookPinnedAfterMs: settings.hookPinnedAfterMinutes * 60_000,
    };
    let reduction: Reduction | undefined;
    let leftover: StoredRelease | undefined;
    const { saved } = await this.deps.store.update(pipelineName, route.releaseId, (current) => {
      leftover = current;
      reduction = reduce(current?.record, fact, ctx);
      return { next: reduction.record, outbox: reduction.effects, result: undefined };
    });
    const outcome = (reduction as Reduction).outcome;
    this.deps.metrics.factsReduced.inc({ source: fact.source, outcome });
    if (reduction?.reason && outcome !== 'applied' && outcome !== 'heartbeat') {
      this.deps.logger.debug({ pipeline: pipelineName, releaseId: route.releaseId, outcome, reason: reduction.reason }, 'fact changed nothing');
    }

    if (saved && target && route.stage && (outcome === 'applied' || outcome === 'heartbeat')) {
      const applicationOfRollouts = fact.kind === 'application' && route.stage.rollouts !== undefined;
      if (!applicationOfRollouts) {
        await this.deps.targets.record(pipelineName, target, { stage: route.stage.name, releaseId: route.releaseId, heardAt: fact.receivedAt });
      }
      if (fact.kind === 'rollout' && fact.rollout.managedBy && outcome === 'applied') {
        await this.deps.targets.recordApplication(`${fact.target.cluster}/${fact.rollout.managedBy}`, {
          pipeline: pipelineName,
          stage: route.stage.name,
          releaseId: route.releaseId,
        });
      }
    }
    const stored = saved ?? leftover;
    if (stored && stored.outbox.length > 0) await this.dispatch(stored.record, stored.outbox);
    return outcome;
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
