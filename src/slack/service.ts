/**
 * Everything Slack in one process: the Bolt app (HTTP mode mounted on Glidepath's server, or
 * Socket Mode), the outbox the reducer worker hands thread effects to, and the writer.
 * Built before the HTTP server starts, so its handler and sink can be passed in.
 */
import type { Registry } from 'prom-client';
import type { Env } from '../config/env.js';
import type { ConfigFile } from '../config/file.js';
import type { RawHandler } from '../http/server.js';
import type { Logger } from '../obs/logger.js';
import type { ThreadEffectSink } from '../releases/ports.js';
import { ReleaseStore } from '../releases/store.js';
import { createKeys } from '../store/keys.js';
import { connectRedis } from '../store/redis.js';
import { ApprovalStore } from '../../commands/approvals.js';
import type { CommandServices } from '../../commands/types.js';
import { AuditLog, auditLimits } from '../audit/audit-log.js';
import { KubeActions } from '../kube/actions.js';
import { ClusterClients } from '../kube/clusters.js';
import { KubeActionError } from '../kube/errors.js';
import type { Keys } from '../store/keys.js';
import type { Redis } from 'ioredis';
import type { ReleaseReader } from '../releases/ports.js';
import { createSlackApp, type SlackApp } from './app.js';
import { createSlackClient } from './client.js';
import { RedisSeenSlackRequests } from './receivers/seen-requests.js';
import { SlackGroupDirectory } from './group-directory.js';
import { ThreadStore } from './writer/threads.js';
import { checkChannels } from './channels.js';
import { createSlackWriterMetrics } from './writer/metrics.js';
import { SlackOutbox } from './writer/outbox.js';
import { createSlackQueue, writerBudgetsFromEnv, writerRetryFromEnv } from './writer/queue.js';
import { SlackWriter } from './writer/writer.js';

export interface SlackService {
  app: SlackApp;
  threads: ThreadEffectSink;
  /** Raw HTTP handlers by path (HTTP mode: `/slack/events`). */
  mounts: Record<string, RawHandler>;
  /** Starts Bolt and the writer (after the HTTP server listens). */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startSlackService(options: { env: Env; config: ConfigFile; logger: Logger; registry: Registry; writer?: boolean }): Promise<SlackService> {
  const { env, config, logger } = options;
  const keys = createKeys(env.REDIS_PREFIX);
  const requests = connectRedis(env.REDIS_URL, 'request');
  const workers = connectRedis(env.REDIS_URL, 'worker');
  const finishedTtlMs = config.settings.finishedReleaseTtlHours * 3_600_000;
  const reader = new ReleaseStore(workers, keys, { finishedTtlMs });
  const releases = new ReleaseStore(requests, keys, { finishedTtlMs });
  const commands = commandServices({ env, config, logger, redis: requests, keys, releases, finishedTtlMs, registry: options.registry });
  const app = await createSlackApp({ env, config, releases, logger, commands, seenRequests: new RedisSeenSlackRequests(requests, keys) });
  const queue = createSlackQueue(workers, env.REDIS_PREFIX);
  const writer = new SlackWriter({
    connection: workers,
    redis: workers,
    keys,
    client: app.client,
    releases: reader,
    pipeline: (name) => config.pipelines.find((p) => p.name === name),
    logger,
    metrics: createSlackWriterMetrics(options.registry),
    finishedTtlMs,
    budgets: writerBudgetsFromEnv(env),
    retry: writerRetryFromEnv(env),
  });
  return {
    app,
    threads: new SlackOutbox(queue),
    mounts: app.handleSlackRequest ? { '/slack/events': app.handleSlackRequest } : {},
    async start() {
      await checkChannels(app.client, config.pipelines, logger);
      await app.start();
      if (options.writer ?? true) writer.start();
    },
    async close() {
      await writer.close();
      await app.stop();
      await queue.close();
      requests.disconnect();
      workers.disconnect();
    },
  };
}

/**
 * What /glidepath and the buttons act through. Cluster clients are built at the first command, not
 * at start-up: a kubeconfig mounted later (or written by the sandbox after Glidepath listens)
 * still works, and a cluster that cannot be configured fails the command with the reason instead
 * of stopping the notifications side.
 */
function commandServices(o: { env: Env; config: ConfigFile; logger: Logger; redis: Redis; keys: Keys; releases: ReleaseReader; finishedTtlMs: number; registry?: Registry }): CommandServices {
  let built: { clusters: ClusterClients; kube: KubeActions } | undefined;
  const build = (): { clusters: ClusterClients; kube: KubeActions } => {
    if (built) return built;
    try {
      const clusters = new ClusterClients(o.config.clusters);
      built = { clusters, kube: new KubeActions(clusters) };
      return built;
    } catch (err) {
      o.logger.warn({ err: (err as Error).message }, 'cluster clients could not be configured: /glidepath cannot act yet');
      throw new KubeActionError('unknown-cluster', `${(err as Error).message}: Glidepath cannot reach its clusters, so nothing was changed; check the clusters section of the config`, undefined, undefined, undefined, { cause: err });
    }
  };
  return {
    config: o.config,
    releases: o.releases,
    get kube() {
      return build().kube;
    },
    get clusters() {
      return build().clusters;
    },
    audit: new AuditLog(o.redis, o.keys.audit(), undefined, auditLimits(o.config, o.keys, o.registry)),
    approvals: new ApprovalStore(o.redis, o.keys),
    groups: new SlackGroupDirectory(createSlackClient(o.env.SLACK_BOT_TOKEN ?? '', o.env.SLACK_API_URL)),
    threads: new ThreadStore(o.redis, o.keys, o.finishedTtlMs),
    logger: o.logger.child({ component: 'commands' }),
  };
}
