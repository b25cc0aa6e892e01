/**
 * Wires one Glidepath process: the HTTP server (ingest, read API, ops), the reducer and
 * watchdog workers, on one Redis. Tests, benchmarks, the sandbox and main() all start it here.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { longestReleaseTtlMs, stallAfterMs, type ConfigFile } from './config/file.js';
import type { Env } from './config/env.js';
import { AnnouncementClaims } from './facts/announcements.js';
import { FactQueue } from './facts/fact-queue.js';
import { registerIngestRoutes } from './facts/ingest.js';
import { AuditLog, auditLimits } from './audit/audit-log.js';
import { registerAuditRoutes } from './audit/audit-api.js';
import { registerOpsRoutes } from './http/ops.js';
import { Router } from './http/router.js';
import { createHttpServer, httpLimitsFromEnv, type RawHandler } from './http/server.js';
import { createLogger, type Logger } from './obs/logger.js';
import { createMetrics, type Metrics } from './obs/metrics.js';
import { LogThreadSink } from './releases/log-thread-sink.js';
import type { ThreadEffectSink } from './releases/ports.js';
import { registerReadRoutes } from './releases/read-api.js';
import { FactReducer, startReducerWorker } from './releases/reducer-worker.js';
import { ReleaseStore } from './releases/store.js';
import { TargetIndex } from './releases/target-index.js';
import { Watchdog, startWatchdogWorker } from './releases/watchdog.js';
import { createKeys, type Keys } from './store/keys.js';
import { connectRedis } from './store/redis.js';
import { ClusterClients } from './kube/clusters.js';
import { WatchSource } from './facts/watch/watch-source.js';

export interface GlidepathOptions {
  env: Env;
  config: ConfigFile;
  logger?: Logger;
  metrics?: Metrics;
  /** Where thread effects go; without Slack they are logged. */
  threads?: ThreadEffectSink;
  /** Run the reducer and watchdog workers in this process (default true). */
  workers?: boolean;
  /** Extra raw handlers by path, e.g. `/slack/events`. */
  mounts?: Record<string, RawHandler>;
  /** Host to listen on (default 0.0.0.0; tests use 127.0.0.1). */
  host?: string;
  /** Run the watch source for clusters configured with `facts: watch` or `both` (default true). */
  watch?: boolean;
}

export interface Glidepath {
  url: string;
  port: number;
  server: Server;
  keys: Keys;
  store: ReleaseStore;
  facts: FactQueue;
  watchdog: Watchdog;
  reducer: FactReducer;
  /** Facts from the clusters themselves (clusters with `facts: watch | both`). */
  watchSource?: WatchSource;
  metrics: Metrics;
  audit: AuditLog;
  workers: Worker[];
  redis: { requests: Redis; workers: Redis };
  close(): Promise<void>;
}

async function waitReady(redis: Redis, what: string): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis (${what}) is not reachable: check REDIS_URL`)), 10_000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export async function startGlidepath(options: GlidepathOptions): Promise<Glidepath> {
  const { env, config } = options;
  const logger = options.logger ?? createLogger(env.LOG_LEVEL);
  const metrics = options.metrics ?? createMetrics();
  const keys = createKeys(env.REDIS_PREFIX);
  const requestRedis = connectRedis(env.REDIS_URL, 'request');
  const workerRedis = connectRedis(env.REDIS_URL, 'worker');
  await Promise.all([waitReady(requestRedis, 'requests'), waitReady(workerRedis, 'workers')]);

  const releaseIdAnnotations = [...new Set(config.pipelines.map((p) => p.releaseIdAnnotation))];
  const ingestFacts = new FactQueue(requestRedis, env.REDIS_PREFIX, releaseIdAnnotations);
  const workerFacts = new FactQueue(workerRedis, env.REDIS_PREFIX, releaseIdAnnotations);
  const store = new ReleaseStore(workerRedis, keys, {
    finishedTtlMs: config.settings.finishedReleaseTtlHours * 3_600_000,
    unfinishedTtlMs: config.settings.unfinishedReleaseTtlDays * 86_400_000,
    cacheSize: 1_000,
  });
  const readStore = new ReleaseStore(requestRedis, keys, { finishedTtlMs: config.settings.finishedReleaseTtlHours * 3_600_000 });
  const targets = new TargetIndex(workerRedis, keys, { forgetAfterMs: config.settings.forgetTargetAfterMinutes * 60_000, retainMs: longestReleaseTtlMs(config) });
  const watchdog = new Watchdog(workerRedis, env.REDIS_PREFIX);
  const threads = options.threads ?? new LogThreadSink(logger);
  const reducer = new FactReducer({ config, store, targets, facts: workerFacts, watchdog, threads, metrics, logger });

  const workers: Worker[] = [];
  if (options.workers ?? true) {
    workers.push(startReducerWorker(reducer, { connection: workerRedis, prefix: env.REDIS_PREFIX, concurrency: env.REDUCER_CONCURRENCY, logger, lockDurationMs: env.JOB_LOCK_MS }));
    workers.push(
      startWatchdogWorker({
        connection: workerRedis,
        prefix: env.REDIS_PREFIX,
        releases: store,
        watchdog,
        facts: workerFacts,
        logger,
        stallAfterMs: (name) => {
          const pipeline = config.pipelines.find((p) => p.name === name);
          return pipeline ? stallAfterMs(config, pipeline) : config.settings.stallAfterMinutes * 60_000;
        },
      }),
    );
  }

  let clusterClients: ClusterClients | undefined;
  const watchSource =
    (options.watch ?? true) && config.clusters.some((c) => c.facts !== 'webhook')
      ? new WatchSource({ config, clusters: () => (clusterClients ??= new ClusterClients(config.clusters)), facts: ingestFacts, redis: workerRedis, keys, logger, metrics }).start()
      : undefined;

  const router = new Router();
  registerIngestRoutes(router, {
    config,
    tokens: env.INGEST_TOKENS,
    ciTokens: env.CI_TOKENS,
    announcements: new AnnouncementClaims(requestRedis, keys, longestReleaseTtlMs(config)),
    facts: ingestFacts,
    metrics,
    logger,
    maxBodyBytes: env.MAX_BODY_BYTES,
  });
  registerReadRoutes(router, { config, readToken: env.API_READ_TOKEN, releases: readStore });
  const audit = new AuditLog(workerRedis, keys.audit(), undefined, auditLimits(config, keys, metrics.registry));
  registerAuditRoutes(router, { readToken: env.API_READ_TOKEN, audit: new AuditLog(requestRedis, keys.audit(), undefined, auditLimits(config, keys, metrics.registry)) });
  registerOpsRoutes(router, { redis: requestRedis, workers: () => workers, queues: [ingestFacts.queue, watchdog.queue], metrics, metricsToken: env.METRICS_TOKEN });
  const server = createHttpServer(router, logger, options.mounts, httpLimitsFromEnv(env));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.PORT, options.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ port, pipelines: config.pipelines.map((p) => p.name) }, 'glidepath listening');

  let closed = false;
  return {
    url,
    port,
    server,
    keys,
    store,
    facts: workerFacts,
    watchdog,
    reducer,
    watchSource,
    metrics,
    audit,
    workers,
    redis: { requests: requestRedis, workers: workerRedis },
    async close() {
      if (closed) return;
      closed = true;
      await watchSource?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([ingestFacts.close(), workerFacts.close(), watchdog.close()]);
      requestRedis.disconnect();
      workerRedis.disconnect();
    },
  };
}
