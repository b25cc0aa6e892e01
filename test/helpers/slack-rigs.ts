/**
 * Whole Glidepaths around the Slack stand-in, built by the composition root like any process:
 * the pipeline rig (facts → reducer → outbox → writer → Slack, and the real Bolt app on
 * Glidepath's own /slack/events) and the writer rig (records saved as the reducer would, and
 * writer-only processes). Each rig has a Redis prefix of its own and a role-less Glidepath
 * (`client`) that feeds and reads the deployment as a test needs, and runs nothing itself.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { startSlackStandIn, type SlackStandIn, type SlackStandInOptions } from '../../sandbox/slack/server.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { Env, Role } from '../../src/config/env.js';
import { configFileSchema, type ConfigFile, type PipelineConfig } from '../../src/config/file.js';
import type { Fact } from '../../src/facts/fact.js';
import type { FactQueue } from '../../src/facts/fact-queue.js';
import { startGlidepath, type Glidepath, type GlidepathOptions } from '../../src/glidepath.js';
import { createMetrics, type Metrics } from '../../src/obs/metrics.js';
import type { ThreadEffect } from '../../src/releases/store/ports.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import type { ReleaseStore } from '../../src/releases/store/store.js';
import type { SlackJob } from '../../src/slack/writer/jobs.js';
import type { SlackOutbox } from '../../src/slack/writer/outbox.js';
import type { WriterBudgets } from '../../src/slack/writer/writer.js';
import type { RetryPolicy } from '../../src/slack/writer/retry.js';
import type { Keys } from '../../src/store/keys.js';
import { dropPrefix, testEnv } from './glidepath.js';
import { captureLogger, type CapturedLogger } from './slack-harness.js';

const SIGNING_SECRET = 'slack-rig-signing-secret';
export const RIG_BOT_TOKEN = 'xoxb-rig';
const BOT_TOKEN = RIG_BOT_TOKEN;
const PENDING = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;

interface SlackRigBase {
  env: Env;
  slack: SlackStandIn;
  log: CapturedLogger;
  metrics: Metrics;
  client: Glidepath;
  start(roles: Role[], extra?: Partial<GlidepathOptions>): Promise<Glidepath>;
  idle(): Promise<boolean>;
  close(): Promise<void>;
}

async function slackRigBase(config: ConfigFile, standIn: SlackStandInOptions | undefined, envOverrides: Record<string, string> = {}): Promise<SlackRigBase> {
  const slack = await startSlackStandIn({ botToken: BOT_TOKEN, ...standIn });
  const env = testEnv({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl, ...envOverrides });
  const log = captureLogger();
  // One registry for every process of the rig, so a test reads the writer's metrics wherever it ran.
  const metrics = createMetrics({ defaultMetrics: false });
  const started: Glidepath[] = [];
  const start = async (roles: Role[], extra: Partial<GlidepathOptions> = {}) => {
    const glidepath = await startGlidepath({ env, config, roles, host: '127.0.0.1', logger: log.logger, metrics, commands: false, ...extra });
    started.push(glidepath);
    return glidepath;
  };
  const client = await start([]);
  return {
    env,
    slack,
    log,
    metrics,
    client,
    start,
    async idle() {
      const [a, b] = await Promise.all([client.facts.queue.getJobCounts(...PENDING), client.slack!.queue!.getJobCounts(...PENDING)]);
      return [...Object.values(a), ...Object.values(b)].every((n) => n === 0);
    },
    async close() {
      for (const g of started.reverse()) await g.close();
      await slack.close();
      await dropPrefix(env.REDIS_PREFIX);
    },
  };
}

export interface PipelineRig {
  slack: SlackStandIn;
  store: ReleaseStore;
  facts: FactQueue;
  sender: SignedSender;
  log: CapturedLogger;
  registry: Registry;
  /** Starts (or restarts) the bot: one Glidepath with every role. */
  startBot(): Promise<void>;
  /** Stops the bot as a pod shutdown would (workers closed, Bolt stopped); Redis keeps everything. */
  stopBot(): Promise<void>;
  add(fact: Fact): Promise<void>;
  /**
   * Adds a fact and waits until it is reduced: facts of one Rollout are seconds apart in life,
   * and reduced concurrently a Paused overtaken by the next Progressing is rightly out of order.
   */
  addAndReduce(fact: Fact): Promise<void>;
  /** True when no fact and no Slack job is waiting, delayed or running. */
  idle(): Promise<boolean>;
  close(): Promise<void>;
}

/** `retryAfterScale`: fraction of Slack's Retry-After the writer waits (a 429 storm at 0.05 takes a twentieth of the time). */
export async function startPipelineRig(options: { config: ConfigFile; standIn?: SlackStandInOptions; budgets?: WriterBudgets; concurrency?: number; retryAfterScale?: number }): Promise<PipelineRig> {
  const concurrency = options.concurrency ?? 4;
  const base = await slackRigBase(options.config, options.standIn, { REDUCER_CONCURRENCY: String(concurrency) });
  const { client } = base;
  let bot: Glidepath | undefined;
  let sender = new SignedSender({ url: 'http://127.0.0.1:9/slack/events', signingSecret: SIGNING_SECRET });
  const rig: PipelineRig = {
    slack: base.slack,
    store: client.store,
    facts: client.facts,
    get sender() {
      return sender;
    },
    log: base.log,
    registry: base.metrics.registry,
    async startBot() {
      // No target-index cache: the next fact may come a millisecond after the last was reduced.
      bot = await base.start(['ingest', 'worker', 'writer'], {
        tuning: {
          targetCacheMs: 0,
          writerConcurrency: concurrency,
          ...(options.budgets ? { writerBudgets: options.budgets } : {}),
          ...(options.retryAfterScale ? { writerRetryAfterScale: options.retryAfterScale } : {}),
        },
      });
      sender = new SignedSender({ url: `${bot.url}/slack/events`, signingSecret: SIGNING_SECRET });
    },
    async stopBot() {
      await bot?.close();
      bot = undefined;
    },
    async add(fact) {
      await client.facts.add(fact);
    },
    async addAndReduce(fact) {
      await client.facts.add(fact);
      for (;;) {
        const counts = await client.facts.queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
        if (Object.values(counts).every((n) => n === 0)) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    idle: () => base.idle(),
    close: () => base.close(),
  };
  return rig;
}

export interface WriterRig {
  prefix: string;
  keys: Keys;
  redis: Redis;
  store: ReleaseStore;
  slack: SlackStandIn;
  queue: Queue<SlackJob>;
  outbox: SlackOutbox;
  registry: Registry;
  log: CapturedLogger;
  /** The writer-only processes started so far. */
  writers: Glidepath[];
  pipelines: PipelineConfig[];
  /** Starts a writer-only Glidepath (a writer replica). */
  startWriter(overrides?: { budgets?: WriterBudgets; concurrency?: number }): Promise<Glidepath>;
  /** Replies in the channel's threads by the effect id in their metadata (for counting doubles). */
  repliesByEffect(channel: string): Map<string, number>;
  /** Saves the record as the reducer would, then hands its effects to the outbox. */
  save(record: ReleaseRecord, effects: ThreadEffect[]): Promise<ReleaseRecord>;
  idle(): Promise<boolean>;
  close(): Promise<void>;
}

export async function startWriterRig(options: {
  pipelines: PipelineConfig[];
  standIn?: SlackStandInOptions;
  budgets?: WriterBudgets;
  retry?: RetryPolicy;
  callTimeoutMs?: number;
  /** The config file's settings (defaults otherwise). */
  settings?: Record<string, unknown>;
  /** Environment of the rig's processes (SLACK_JOB_LOCK_MS, …). */
  env?: Record<string, string>;
}): Promise<WriterRig> {
  const clusters = [...new Set(options.pipelines.flatMap((p) => p.stages.map((s) => s.cluster)))].map((name) => ({ name }));
  const config = configFileSchema.parse({ clusters, pipelines: options.pipelines, ...(options.settings ? { settings: options.settings } : {}) });
  const base = await slackRigBase(config, options.standIn, options.env);
  const { client } = base;
  const writers: Glidepath[] = [];
  return {
    prefix: base.env.REDIS_PREFIX,
    keys: client.keys,
    redis: client.redis.workers,
    store: client.store,
    slack: base.slack,
    queue: client.slack!.queue!,
    outbox: client.slack!.outbox!,
    registry: base.metrics.registry,
    log: base.log,
    writers,
    pipelines: options.pipelines,
    async startWriter(overrides = {}) {
      const budgets = overrides.budgets ?? options.budgets;
      const writer = await base.start(['writer'], {
        tuning: {
          writerConcurrency: overrides.concurrency ?? 4,
          ...(budgets ? { writerBudgets: budgets } : {}),
          ...(options.retry ? { writerRetry: options.retry } : {}),
          ...(options.callTimeoutMs ? { writerCallTimeoutMs: options.callTimeoutMs } : {}),
        },
      });
      writers.push(writer);
      return writer;
    },
    repliesByEffect(channel) {
      const out = new Map<string, number>();
      for (const parent of base.slack.transcript.messages(channel)) {
        for (const r of parent.replies) {
          // A file share (an analysis chart, the release timeline) is no reply of an effect: counted by the chart tests.
          if (r.files && r.files.length > 0) continue;
          const effect = String(r.metadata?.event_payload.effect ?? '(no metadata)');
          out.set(effect, (out.get(effect) ?? 0) + 1);
        }
      }
      return out;
    },
    async save(record, effects) {
      const { saved } = await client.store.update(record.pipeline, record.releaseId, (current) => ({
        next: { ...record, version: current?.record.version ?? 0 },
        result: null,
      }));
      if (!saved) throw new Error('not saved');
      await client.slack!.outbox!.send(saved.record, effects);
      return saved.record;
    },
    idle: async () => {
      const counts = await client.slack!.queue!.getJobCounts(...PENDING);
      return Object.values(counts).every((n) => n === 0);
    },
    close: () => base.close(),
  };
}
