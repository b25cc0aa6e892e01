/**
 * The Slack part of a Glidepath, built by the composition root (src/glidepath.ts) for the roles
 * the process runs: the Bolt app with the commands (ingest), the outbox the reducer hands thread
 * effects to (worker), the writer that turns them into messages (writer).
 */
import type { Queue, Worker } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { ApprovalStore } from '../actions/approvals.js';
import { Rejections } from '../actions/rejections.js';
import type { Fact } from '../facts/fact.js';
import { OwnActions } from '../releases/store/own-actions.js';
import type { CommandServices } from '../slack/listeners/command-port.js';
import { commandHandlers } from '../../commands/handlers.js';
import { AuditLog, auditLimits } from '../audit/audit-log.js';
import type { Env, Role } from '../config/env.js';
import { type ConfigFile } from '../config/file.js';
import { finishedTtlMs, unfinishedTtlMs } from '../config/durations.js';
import { frozenStageLines } from '../actions/freeze.js';
import { KubeReads } from '../kube/reads-by-cluster.js';
import type { ClusterClients } from '../kube/clusters.js';
import { KubeActionError } from '../kube/errors.js';
import type { Logger } from '../obs/logger.js';
import type { ReleaseReader } from '../releases/store/ports.js';
import { ReleaseStore } from '../releases/store/store.js';
import { DeliveryStats, type DeliveryReader } from '../releases/store/delivery-stats.js';
import { createSlackApp, checkBotToken, type SlackApp } from '../slack/app.js';
import { ChannelProblems } from '../slack/channel-problems.js';
import { checkChannels, checkChannelsOnce, type ChannelProblem } from '../slack/channels.js';
import { createSlackClient } from '../slack/client.js';
import { SlackGroupDirectory } from '../slack/group-directory.js';
import { SlackProfileDirectory } from '../slack/profile-directory.js';
import { IdentityMap } from '../policy/identity.js';
import { RedisSeenSlackRequests } from '../slack/receivers/seen-requests.js';
import type { SlackJob } from '../slack/writer/jobs.js';
import { createSlackWriterMetrics, type SlackWriterMetrics } from '../slack/writer/metrics.js';
import { SlackOutbox } from '../slack/writer/outbox.js';
import { createSlackQueue, writerBudgetsFromEnv, writerRetryFromEnv } from '../slack/writer/queue.js';
import type { RetryPolicy } from '../slack/writer/retry.js';
import { ThreadStore } from '../slack/writer/threads.js';
import { SlackWriter, type WriterBudgets } from '../slack/writer/writer.js';
import type { Keys } from '../store/keys.js';
import { catalogOf, pipelineNamedShared } from '../routing/catalog.js';

/** What tests and the sandbox may swap in the commands: the clusters, the clock, how long promote follows. */
export interface CommandSeams {
  /** Clients already pointed at stand-in clusters; by default the root builds them from the config's clusters. */
  clusters?: ClusterClients;
  now?: () => number;
  followTimeoutMs?: number;
}

export interface SlackPartOptions {
  env: Env;
  config: ConfigFile;
  roles: ReadonlySet<Role>;
  logger: Logger;
  registry: Registry;
  keys: Keys;
  requests: Redis;
  workers: Redis;
  /** false: no cluster actions (buttons and /glidepath answer that Glidepath cannot act). */
  commands: CommandSeams | false;
  /** The process's cluster clients (the root owns them and builds them at start-up). */
  clusters: () => ClusterClients;
  /** Where rejections are told to the reducer (the facts queue), so the record shows them. */
  facts?: { add(fact: Fact): Promise<unknown> };
  writerBudgets?: WriterBudgets;
  writerConcurrency?: number;
  writerRetry?: RetryPolicy;
  writerCallTimeoutMs?: number;
  /** Fraction of Slack's Retry-After the writer waits (tests; default 1). */
  writerRetryAfterScale?: number;
  /** Clock of the writer's budgets. */
  now?: () => number;
  /** A generated pipeline's channel Slack says cannot be used (counted by the root). */
  onChannelProblem?: (template: string, problem: ChannelProblem) => void;
}

export interface SlackPart {
  app?: SlackApp;
  client: WebClient;
  /** The "slack" queue (outbox), on processes that run the reducer or are role-less clients. */
  queue?: Queue<SlackJob>;
  outbox?: SlackOutbox;
  writer?: SlackWriter;
  commands?: CommandServices;
  /** Starts Bolt and the writer, after the HTTP server listens; returns the writer's BullMQ worker. */
  start(): Promise<Worker<SlackJob> | undefined>;
  /** Bolt stops taking requests (first, with the HTTP server). */
  stopRequests(): Promise<void>;
  /** The writer finishes the jobs in hand; the queue closes. */
  stopWork(): Promise<void>;
}

// One set of writer metrics per registry: several writers of one test share a registry.
const writerMetrics = new WeakMap<Registry, SlackWriterMetrics>();
function writerMetricsFor(registry: Registry): SlackWriterMetrics {
  let metrics = writerMetrics.get(registry);
  if (!metrics) writerMetrics.set(registry, (metrics = createSlackWriterMetrics(registry)));
  return metrics;
}

type WriterTuning = Pick<SlackPartOptions, 'writerBudgets' | 'writerConcurrency' | 'writerRetry' | 'writerCallTimeoutMs' | 'writerRetryAfterScale'>;

/** The writer's tuning a test or bench set, the fields it left unset (or 0) to the defaults. */
export function writerTuning(tuning: Partial<WriterTuning> & object = {}): Partial<WriterTuning> {
  return Object.fromEntries(Object.entries(tuning).filter(([key, value]) => key.startsWith('writer') && Boolean(value))) as Partial<WriterTuning>;
}

export async function buildSlackPart(o: SlackPartOptions): Promise<SlackPart> {
  const { env, config, roles, logger, keys } = o;
  const token = env.SLACK_BOT_TOKEN as string;
  const ttl = { finishedTtlMs: finishedTtlMs(config), unfinishedTtlMs: unfinishedTtlMs(config) };
  // Listeners answer people: they read and write on the fail-fast connection.
  const releases = new ReleaseStore(o.requests, keys, ttl);
  const delivery = new DeliveryStats(o.requests, keys);
  const commands = roles.has('ingest') && o.commands !== false ? commandServices({ ...o, seams: o.commands, releases, delivery }) : undefined;
  // Replays are refused across replicas: the signatures already seen live in Redis.
  const app = roles.has('ingest') ? await createSlackApp({ env, config, releases, delivery, logger, seenRequests: new RedisSeenSlackRequests(o.requests, keys), ...(commands ? { commands: { services: commands, handlers: commandHandlers } } : {}) }) : undefined;
  let client: WebClient;
  if (app) client = app.client;
  else {
    client = createSlackClient(token, env.SLACK_API_URL);
    await checkBotToken(client, env.SLACK_API_URL);
  }
  const queue = roles.has('worker') || roles.size === 0 ? createSlackQueue(o.workers, keys.queuePrefix('slack')) : undefined;
  const writer =
    roles.has('writer')
      ? new SlackWriter({
          connection: o.workers,
          redis: o.workers,
          keys,
          client,
          // The writer renders the newest record: a store without the reducer's cache.
          releases: new ReleaseStore(o.workers, keys, ttl),
          pipeline: (name) => pipelineNamedShared(config, name),
          frozenStages: (pipeline) => frozenStageLines(config.freezes, pipeline, (o.now ?? Date.now)()),
          logger,
          metrics: writerMetricsFor(o.registry),
          ...ttl,
          budgets: o.writerBudgets ?? writerBudgetsFromEnv(env),
          retry: o.writerRetry ?? writerRetryFromEnv(env),
          ...(o.writerCallTimeoutMs ? { callTimeoutMs: o.writerCallTimeoutMs } : {}),
          jobLockMs: env.SLACK_JOB_LOCK_MS,
          ...(o.writerRetryAfterScale ? { retryAfterScale: o.writerRetryAfterScale } : {}),
          ...(o.writerConcurrency ? { concurrency: o.writerConcurrency } : {}),
          ...(o.now ? { now: o.now } : {}),
        })
      : undefined;
  return {
    ...(app ? { app } : {}),
    client,
    ...(queue ? { queue, outbox: new SlackOutbox(queue) } : {}),
    ...(writer ? { writer } : {}),
    ...(commands ? { commands } : {}),
    async start() {
      const problems = new ChannelProblems(o.workers, keys.slackChannelProblems());
      const remember = (checked: readonly { name: string }[], found: readonly ChannelProblem[]) =>
        problems.record(checked, found).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'channel problems could not be kept for /glidepath status'));
      if (writer) {
        const pipelines = config.pipelines;
        const found = await checkChannelsOnce(o.workers, keys.slackChannelsChecked(), client, pipelines, logger);
        if (found !== 'already checked') await remember(pipelines, found);
      }
      // A generated pipeline's channel (a template's, or an app's own annotation) is looked up once
      // per process when it first appears: a channel the bot is not in is one clear error line.
      const checked = new Set(config.pipelines.map((p) => p.channel));
      catalogOf(config)?.onChannel((g) => {
        if (checked.has(g.pipeline.channel)) return;
        checked.add(g.pipeline.channel);
        void checkChannels(client, [g.pipeline], logger).then(
          async (found) => {
            for (const p of found) o.onChannelProblem?.(g.template, p);
            await remember([g.pipeline], found);
          },
          () => checked.delete(g.pipeline.channel),
        );
      });
      await app?.start();
      return writer?.start();
    },
    async stopRequests() {
      await app?.stop();
    },
    async stopWork() {
      await writer?.close();
      await queue?.close();
    },
  };
}

/**
 * What /glidepath and the buttons act through. Start-up has checked the clusters already
 * (src/wiring/cluster-startup.ts); an optional cluster that cannot be configured fails the command
 * with the reason, and is tried again at the next one.
 */
function commandServices(o: SlackPartOptions & { seams: CommandSeams; releases: ReleaseReader; delivery: DeliveryReader }): CommandServices {
  let built: { clusters: ClusterClients; kube: KubeReads } | undefined;
  const build = (): { clusters: ClusterClients; kube: KubeReads } => {
    if (built) return built;
    try {
      const clusters = o.clusters();
      built = { clusters, kube: new KubeReads(clusters) };
      return built;
    } catch (err) {
      o.logger.warn({ err: (err as Error).message }, 'cluster clients could not be configured: /glidepath cannot act yet');
      throw new KubeActionError('unknown-cluster', `${(err as Error).message}: Glidepath cannot reach its clusters, so nothing was changed; check the clusters section of the config`, undefined, undefined, undefined, { cause: err });
    }
  };
  const slackClient = createSlackClient(o.env.SLACK_BOT_TOKEN ?? '', o.env.SLACK_API_URL);
  const groups = new SlackGroupDirectory(slackClient);
  const byEmail = o.config.identities.byEmail;
  return {
    config: o.config,
    releases: o.releases,
    delivery: o.delivery,
    get kube() {
      return build().kube;
    },
    get clusters() {
      return build().clusters;
    },
    audit: new AuditLog(o.requests, o.keys.audit(), undefined, auditLimits(o.config, o.keys, o.registry)),
    approvals: new ApprovalStore(o.requests, o.keys),
    ownActions: new OwnActions(o.requests, o.keys),
    rejections: new Rejections(o.requests, o.keys, o.facts, o.seams.now),
    groups,
    identities: new IdentityMap(o.config.identities, groups, byEmail ? new SlackProfileDirectory(slackClient, byEmail.cacheSeconds * 1000) : undefined),
    threads: new ThreadStore(o.requests, o.keys, finishedTtlMs(o.config), unfinishedTtlMs(o.config)),
    channelProblems: new ChannelProblems(o.requests, o.keys.slackChannelProblems()),
    logger: o.logger.child({ component: 'commands' }),
    ...(o.seams.now ? { now: o.seams.now } : {}),
    ...(o.seams.followTimeoutMs !== undefined ? { followTimeoutMs: o.seams.followTimeoutMs } : {}),
  };
}
