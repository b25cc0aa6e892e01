/**
 * The composition root: the one place that builds a whole Glidepath from env + config, for the
 * roles this process runs (GLIDEPATH_ROLE). `src/main.ts`, the sandbox, every test rig and every
 * benchmark start Glidepath here; nothing else wires parts together.
 *
 *   ingest  HTTP ingest, the read and audit APIs, the Slack app (/slack/events or Socket Mode),
 *           and the watch source of clusters with `facts: watch | both` (one replica per cluster, by lease)
 *   worker  the reducer and the watchdog workers; thread effects go to the Slack outbox
 *   writer  the Slack writer
 * Every process serves /healthz, /readyz and /metrics. With no roles (tests and benchmarks that
 * only feed or read a deployment) it opens the queues and stores and runs nothing.
 *
 * Seams for the sandbox and tests: cluster kubeconfigs come from the config (or `commands.clusters`),
 * Slack's URL from SLACK_API_URL, the clock from `now`.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Worker } from 'bullmq';
import { AuditLog, auditLimits } from './audit/audit-log.js';
import { registerAuditRoutes } from './audit/audit-api.js';
import type { Env, Role } from './config/env.js';
import type { ConfigFile } from './config/file.js';
import { finishedTtlMs, longestReleaseTtlMs, stallAfterMs, unfinishedTtlMs, watchBoundsBytes } from './config/durations.js';
import { AnnouncementClaims } from './facts/announcements.js';
import type { FactQueue } from './facts/fact-queue.js';
import { WatchSource } from './facts/watch/watch-source.js';
import { registerIngestRoutes } from './facts/ingest.js';
import { registerOpsRoutes } from './http/ops.js';
import { Router } from './http/router.js';
import { createHttpServer, httpLimitsFromEnv, type RawHandler } from './http/server.js';
import { ClusterClients } from './kube/clusters.js';
import { tuneGarbageCollection } from './wiring/garbage-collection.js';
import { checkClustersAtStartup, usesClusters, watchesClusters } from './wiring/cluster-startup.js';
import { kargoApiEndpoints } from './config/kargo-api.js';
import type { KargoApiEndpoint } from './kube/kargo-api.js';
import { createLogger, type Logger } from './obs/logger.js';
import { createMetrics, type Metrics } from './obs/metrics.js';
import { LogThreadSink } from './releases/worker/log-thread-sink.js';
import type { ThreadEffect, ThreadEffectSink } from './releases/store/ports.js';
import type { ReleaseRecord } from './releases/record/record.js';
import { registerReadRoutes } from './releases/read-api.js';
import { FactReducer } from './releases/worker/reducer-worker.js';
import { AppSetRollouts } from './releases/worker/appset-rollouts.js';
import { AppSetMemberships } from './releases/store/appset-memberships.js';
import { ReleaseStore } from './releases/store/store.js';
import { TargetIndex } from './releases/store/target-index.js';
import { OwnActions } from './releases/store/own-actions.js';
import { DeliveryStats } from './releases/store/delivery-stats.js';
import { AnalysisRunReader } from './kube/analysis-runs.js';
import { PromoteFreightResolver } from './releases/worker/promote-freight.js';
import { AnnouncedImages } from './releases/store/kargo-index.js';
import { Watchdog, startWatchdogWorker } from './releases/worker/watchdog.js';
import { PartitionWorkers } from './releases/worker/partition-workers.js';
import { ensureKeyLayout } from './store/layout.js';
import type { RetryPolicy } from './slack/writer/retry.js';
import type { WriterBudgets } from './slack/writer/writer.js';
import { createKeys, type Keys } from './store/keys.js';
import { openFactQueues } from './wiring/fact-queues.js';
import { closeRedis, openRedis, type RedisConnections } from './wiring/redis.js';
import { redisTargetFromEnv } from './wiring/redis-target.js';
import { catalogEvents } from './routing/catalog-events.js';
import { catalogOf, pipelineNamed, releaseIdAnnotationsOf, withCatalog } from './routing/catalog.js';
import { SharedCatalog } from './routing/shared-catalog.js';
import { applyConfig } from './routing/running-config.js';
import { ConfigReloader, type ConfigReloadOptions, type ReloadResult, type ReloadTrigger } from './wiring/config-reload.js';
import { writeProbesOf } from './wiring/write-probes.js';
import { buildSlackPart, writerTuning, type CommandSeams, type SlackPart } from './wiring/slack.js';

export interface GlidepathOptions {
  env: Env;
  config: ConfigFile;
  /** The file `config` was read from: re-read by reloadConfig() (SIGHUP) and when it changes (src/wiring/config-reload.ts). */
  configSource?: Omit<ConfigReloadOptions, 'running' | 'apply' | 'logger' | 'metrics'>;
  /** Roles to run; default env.GLIDEPATH_ROLE. An empty list runs nothing (a client of the deployment). */
  roles?: Iterable<Role>;
  logger?: Logger;
  metrics?: Metrics;
  /** Host to listen on (default 0.0.0.0; tests use 127.0.0.1). */
  host?: string;
  /** Where thread effects go; default the Slack outbox when SLACK_BOT_TOKEN is set, otherwise the log. */
  threads?: ThreadEffectSink;
  /** Sees every batch of thread effects the reducer hands on (benchmarks count what Slack must show). */
  observeThreads?: (record: ReleaseRecord, effects: ThreadEffect[]) => void;
  /** Seams of /glidepath and the buttons; false runs Slack without cluster actions. */
  commands?: CommandSeams | false;
  /** Clock of the Slack writer's budgets. */
  now?: () => number;
  /** Knobs the environment does not carry (tests and benchmarks). */
  tuning?: {
    writerBudgets?: WriterBudgets;
    writerConcurrency?: number;
    /** The writer's retry policy (default from SLACK_RETRY_*). */
    writerRetry?: RetryPolicy;
    /** How long one Slack call may take before it counts as failed (ambiguous). */
    writerCallTimeoutMs?: number;
    /** Fraction of Slack's Retry-After the writer waits (tests; default 1). */
    writerRetryAfterScale?: number;
    targetCacheMs?: number;
    redisReadyTimeoutMs?: number;
  };
}

export interface Glidepath {
  url: string;
  port: number;
  server: Server;
  roles: ReadonlySet<Role>;
  keys: Keys;
  /** Release records, as the reducer reads and writes them. */
  store: ReleaseStore;
  /** The facts queue (adding a fact is what ingest does). */
  facts: FactQueue;
  watchdog: Watchdog;
  reducer?: FactReducer;
  /** The fact partitions this replica works (worker role). */
  partitions?: PartitionWorkers;
  /** Facts from the clusters themselves (ingest role, clusters with `facts: watch | both`). */
  watchSource?: WatchSource;
  threads: ThreadEffectSink;
  slack?: SlackPart;
  metrics: Metrics;
  audit: AuditLog;
  workers: Worker[];
  redis: RedisConnections;
  /** Re-reads the config file and applies it if it is new and valid (SIGHUP); refused without a configSource. */
  reloadConfig(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** The running config file's hash (undefined without a configSource). */
  configHash(): string | undefined;
  /**
   * Shuts down in order: /readyz fails (for `drainMs`), the server stops accepting and finishes
   * the requests in flight, workers finish the jobs in hand, queues close, Redis closes.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

/** How long requests in flight may take to finish once the server stops accepting. */
const REQUESTS_GRACE_MS = 10_000;

export async function startGlidepath(options: GlidepathOptions): Promise<Glidepath> {
  const { env } = options;
  const roles: ReadonlySet<Role> = new Set(options.roles ?? env.GLIDEPATH_ROLE);
  tuneGarbageCollection({ heapGrowthPercent: env.HEAP_GROWTH_PERCENT, ingest: roles.has('ingest') });
  // Checked before anything starts, where commands run (ingest): a Kargo API URL needs its token, and a token its URL.
  const kargoApis = roles.has('ingest') ? kargoApiEndpoints(options.config, env) : new Map<string, KargoApiEndpoint>();
  const logger = options.logger ?? createLogger(env.LOG_LEVEL);
  const metrics = options.metrics ?? createMetrics();
  // The running config: its pipelines are the file's and those its templates generate (src/routing/catalog.ts).
  const config = withCatalog(options.config, catalogEvents(logger, metrics));
  const keys = createKeys(env.REDIS_PREFIX, { partitions: env.FACT_PARTITIONS });
  const redis = await openRedis(redisTargetFromEnv(env), options.tuning?.redisReadyTimeoutMs);
  try {
    await ensureKeyLayout(redis.requests, keys);
  } catch (err) {
    await closeRedis(redis, false);
    throw err;
  }
  const { requests } = redis;
  const work = redis.workers;
  // What other replicas generated (a writer or a Slack replica sees no objects of its own).
  const catalog = catalogOf(config);
  let sharedCatalog: SharedCatalog | undefined;
  const shareCatalog = async (): Promise<void> => {
    if (sharedCatalog || !catalog || catalog.templates.length === 0) return;
    await (sharedCatalog = new SharedCatalog({ redis: work, keys, catalog, ttlMs: longestReleaseTtlMs(config), logger })).start();
  };
  await shareCatalog();

  const { ingestFacts, workFacts } = openFactQueues(redis, keys, config, env.FACT_JOBS_KEEP_COMPLETED);
  const readStore = new ReleaseStore(requests, keys, { finishedTtlMs: finishedTtlMs(config) });
  const store = new ReleaseStore(work, keys, { finishedTtlMs: finishedTtlMs(config), unfinishedTtlMs: unfinishedTtlMs(config), cacheSize: 1_000, onConflict: () => metrics.casConflicts.inc() });
  // One set of cluster clients per process. The roles that use clusters build them now (start-up
  // says what is wrong with each); an optional cluster's kubeconfig written later still works.
  const seams = options.commands === false ? undefined : options.commands;
  let clients = seams?.clusters;
  const clusters = (): ClusterClients => (clients ??= new ClusterClients(config.clusters.map((c) => ({ ...c, ...(kargoApis.has(c.name) ? { kargoApiEndpoint: kargoApis.get(c.name)! } : {}) })), { watch: watchBoundsBytes(config) }));
  // Only the clients built here are closed here: ones handed in (commands seams) belong to the caller.
  const ownsClients = !clients;
  if (ownsClients && usesClusters(roles, config, env.SLACK_BOT_TOKEN !== undefined && options.commands !== false)) {
    try {
      await checkClustersAtStartup(config.clusters, clusters, logger);
    } catch (err) {
      await clients?.close();
      await closeRedis(redis, false);
      throw err;
    }
  }
  const watchdog = new Watchdog(work, keys.queuePrefix('watchdog'));

  let slack: SlackPart | undefined;
  try {
    if (env.SLACK_BOT_TOKEN) {
      slack = await buildSlackPart({
        env,
        config,
        roles,
        logger,
        registry: metrics.registry,
        keys,
        requests,
        workers: work,
        facts: ingestFacts,
        commands: options.commands ?? {},
        clusters,
        onChannelProblem: (template) => metrics.templateProblems.inc({ template, reason: 'channel_unusable' }),
        ...writerTuning(options.tuning),
        ...(options.now ? { now: options.now } : {}),
      });
    } else if (roles.has('worker') || roles.has('writer')) {
      logger.warn('SLACK_BOT_TOKEN is not set: release threads are logged, not posted');
    }
  } catch (err) {
    await closeRedis(redis, false);
    throw err;
  }
  const sink = options.threads ?? slack?.outbox ?? new LogThreadSink(logger);
  const observe = options.observeThreads;
  const threads: ThreadEffectSink = observe
    ? {
        async send(record, effects) {
          await sink.send(record, effects);
          observe(record, effects);
        },
      }
    : sink;

  const workers: Worker[] = [];
  let reducer: FactReducer | undefined;
  let partitions: PartitionWorkers | undefined;
  if (roles.has('worker')) {
    const targets = new TargetIndex(work, keys, { forgetAfterMs: config.settings.forgetTargetAfterMinutes * 60_000, retainMs: longestReleaseTtlMs(config), ...(options.tuning?.targetCacheMs !== undefined ? { cacheMs: options.tuning.targetCacheMs } : {}) });
    reducer = new FactReducer({
      config,
      store,
      targets,
      facts: workFacts,
      watchdog,
      threads,
      metrics,
      logger,
      partitions: keys.partitions,
      ownActions: new OwnActions(work, keys),
      analysisRuns: new AnalysisRunReader(clusters, logger),
      promoteFreight: new PromoteFreightResolver(config, clusters, logger),
      announcedImages: new AnnouncedImages(work, keys, longestReleaseTtlMs(config)),
      appSetMemberships: new AppSetMemberships(work, keys, longestReleaseTtlMs(config)),
      appSetRollouts: new AppSetRollouts(work, keys, config, longestReleaseTtlMs(config)),
      delivery: new DeliveryStats(work, keys),
    });
    // One reducer Worker per fact partition this replica holds a lease on (all of them when alone).
    partitions = await PartitionWorkers.start({
      connection: work, keys, reducer, metrics, logger,
      concurrency: env.REDUCER_CONCURRENCY,
      leaseMs: env.PARTITION_LEASE_MS,
      lockDurationMs: env.JOB_LOCK_MS,
      onHeldChange: (held) => metrics.partitionsHeld.set(held.length),
    });
    workers.push(
      startWatchdogWorker({
        connection: work,
        prefix: keys.queuePrefix('watchdog'),
        releases: store,
        watchdog,
        facts: workFacts,
        logger,
        stallAfterMs: (name) => {
          const pipeline = pipelineNamed(config, name);
          return pipeline ? stallAfterMs(config, pipeline) : config.settings.stallAfterMinutes * 60_000;
        },
      }),
    );
  }

  let stopping = false;
  const router = new Router();
  const mounts: Record<string, RawHandler> = {};
  if (roles.has('ingest')) {
    registerIngestRoutes(router, {
      config,
      tokens: env.INGEST_TOKENS,
      ciTokens: env.CI_TOKENS,
      announcements: new AnnouncementClaims(requests, keys, longestReleaseTtlMs(config), new AnnouncedImages(requests, keys, longestReleaseTtlMs(config))),
      facts: ingestFacts,
      metrics,
      logger,
      maxBodyBytes: env.MAX_BODY_BYTES,
      maxQueuedFacts: env.INGEST_MAX_QUEUED_FACTS,
    });
    registerReadRoutes(router, { config, readToken: env.API_READ_TOKEN, releases: readStore });
    registerAuditRoutes(router, { readToken: env.API_READ_TOKEN, audit: new AuditLog(requests, keys.audit(), undefined, auditLimits(config, keys, metrics.registry)) });
    if (slack?.app?.handleSlackRequest) mounts['/slack/events'] = slack.app.handleSlackRequest;
  }
  const allWorkers = (): Worker[] => [...(partitions?.workers() ?? []), ...workers];
  registerOpsRoutes(router, {
    redis: requests,
    workers: allWorkers,
    queues: [...ingestFacts.queues, watchdog.queue],
    waitingFacts: () => ingestFacts.waiting(),
    metrics,
    metricsToken: env.METRICS_TOKEN,
    stopping: () => stopping,
    configHash: () => reloader?.hash,
    writeProbes: () => writeProbesOf(roles, keys, partitions?.status().held ?? [], slack !== undefined),
    ...(partitions ? { partitions } : {}),
  });
  const server = createHttpServer(router, logger, mounts, httpLimitsFromEnv(env));
  // The watch source feeds the same queue as the webhooks; a Redis lease per cluster keeps it to one replica.
  const watchClusters = (): WatchSource | undefined => (roles.has('ingest') && watchesClusters(config) ? new WatchSource({ config, clusters, facts: ingestFacts, redis: work, keys, logger, metrics }).start() : undefined);
  let watchSource = watchClusters();

  const reloader = options.configSource
    ? new ConfigReloader({
        ...options.configSource,
        running: () => config,
        logger,
        metrics,
        async apply(next) {
          applyConfig(config, next);
          const annotations = releaseIdAnnotationsOf(config);
          for (const queue of [ingestFacts, workFacts]) queue.useReleaseIdAnnotations(annotations);
          await shareCatalog();
          await (watchSource ? watchSource.reconfigure() : (watchSource = watchClusters()));
        },
      })
    : undefined;

  let closing: Promise<void> | undefined;
  const shutdown = async (drainMs: number): Promise<void> => {
    stopping = true;
    if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    // Stop accepting; requests in flight finish (bounded), idle keep-alive sockets go now.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), drainMs > 0 ? REQUESTS_GRACE_MS : 0);
    await closed;
    clearTimeout(grace);
    await slack?.stopRequests();
    await reloader?.stop();
    // Hand the watch leases over at once, so another replica goes on without waiting out the TTL.
    await watchSource?.close();
    // Workers finish the jobs they hold (BullMQ's close waits for them), then nothing is taken;
    // the partition leases go back at once, so another replica goes on without waiting out the TTL.
    await Promise.all([partitions?.close(), ...workers.map((w) => w.close())]);
    await slack?.stopWork();
    await Promise.all([ingestFacts.close(), workFacts.close(), watchdog.close(), sharedCatalog?.stop()]);
    // The watch source has stopped its watches: now the clusters' connection pools go.
    if (ownsClients) await clients?.close();
    await closeRedis(redis);
    logger.info('glidepath stopped');
  };

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(env.PORT, options.host ?? '0.0.0.0', () => resolve());
    });
    // Bolt and the writer start once the server listens (HTTP mode answers on it).
    const writerWorker = await slack?.start();
    if (writerWorker) workers.push(writerWorker);
    reloader?.start();
  } catch (err) {
    // A port in use or a Slack that refuses us: leave no worker or connection behind.
    await shutdown(0).catch(() => undefined);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ port, roles: [...roles], pipelines: config.pipelines.map((p) => p.name) }, 'glidepath listening');

  return {
    url,
    port,
    server,
    roles,
    keys,
    store,
    facts: workFacts,
    watchdog,
    ...(reducer ? { reducer } : {}),
    ...(partitions ? { partitions } : {}),
    get watchSource() {
      return watchSource;
    },
    threads,
    ...(slack ? { slack } : {}),
    metrics,
    audit: new AuditLog(work, keys.audit(), undefined, auditLimits(config, keys, metrics.registry)),
    get workers() {
      return allWorkers();
    },
    redis,
    reloadConfig: async (trigger = 'api') => (reloader ? reloader.reload(trigger) : { result: 'refused', problems: ['started from a config object, not a file: nothing to re-read'] }),
    configHash: () => reloader?.hash,
    close(closeOptions = {}) {
      closing ??= shutdown(closeOptions.drainMs ?? 0);
      return closing;
    },
  };
}
