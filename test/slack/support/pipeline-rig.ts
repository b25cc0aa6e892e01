/**
 * The whole path a user sees: facts → "facts" queue → reducer worker → release store → Slack
 * outbox → "slack" queue → writer → the Slack stand-in; plus the real Bolt app on an HTTP server.
 * Everything real: Redis, BullMQ, Bolt, WebClient; only Slack itself is the stand-in.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import type { ConfigFile } from '../../../src/config/file.js';
import type { Fact } from '../../../src/facts/fact.js';
import { FactQueue } from '../../../src/facts/fact-queue.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { FactReducer, startReducerWorker } from '../../../src/releases/reducer-worker.js';
import { ReleaseStore } from '../../../src/releases/store.js';
import { TargetIndex } from '../../../src/releases/target-index.js';
import { Watchdog } from '../../../src/releases/watchdog.js';
import { startSlackStandIn, type SlackStandIn, type SlackStandInOptions } from '../../../sandbox/slack/server.js';
import { SignedSender } from '../../../sandbox/slack/sender.js';
import { createSlackApp, type SlackApp } from '../../../src/slack/app.js';
import { createSlackWriterMetrics, type SlackWriterMetrics } from '../../../src/slack/writer/metrics.js';
import { SlackOutbox } from '../../../src/slack/writer/outbox.js';
import { createSlackQueue } from '../../../src/slack/writer/queue.js';
import { SlackWriter, type WriterBudgets } from '../../../src/slack/writer/writer.js';
import { createKeys } from '../../../src/store/keys.js';
import { captureLogger, deletePrefix, redisClient, serveSlackEvents, testPrefix, type CapturedLogger } from './harness.js';

const SIGNING_SECRET = 'pipeline-rig-signing-secret';

export interface PipelineRig {
  slack: SlackStandIn;
  store: ReleaseStore;
  facts: FactQueue;
  sender: SignedSender;
  log: CapturedLogger;
  slackMetrics: SlackWriterMetrics;
  registry: Registry;
  /** Starts (or restarts) the bot: Bolt app, reducer worker, Slack writer. */
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

export async function startPipelineRig(options: { config: ConfigFile; standIn?: SlackStandInOptions; budgets?: WriterBudgets; concurrency?: number }): Promise<PipelineRig> {
  const { config } = options;
  const prefix = testPrefix();
  const keys = createKeys(prefix);
  const redis = redisClient();
  const connections: Redis[] = [redis];
  const store = new ReleaseStore(redis, keys, { finishedTtlMs: config.settings.finishedReleaseTtlHours * 3_600_000 });
  const annotations = config.pipelines.map((p) => p.releaseIdAnnotation);
  const facts = new FactQueue(redis, prefix, annotations);
  const watchdog = new Watchdog(redis, prefix);
  const slackQueue = createSlackQueue(redis, prefix);
  const slack = await startSlackStandIn({ botToken: 'xoxb-rig', ...options.standIn });
  const log = captureLogger();
  const registry = new Registry();
  const slackMetrics = createSlackWriterMetrics(registry);
  let bot: { app: SlackApp; reducer: Worker; writer: SlackWriter; server: { url: string; close(): Promise<void> } } | undefined;
  let sender = new SignedSender({ url: 'http://127.0.0.1:9/slack/events', signingSecret: SIGNING_SECRET });

  const rig: PipelineRig = {
    slack,
    store,
    facts,
    get sender() {
      return sender;
    },
    log,
    slackMetrics,
    registry,
    async startBot() {
      const connection = redisClient();
      connections.push(connection);
      const app = await createSlackApp({
        env: { SLACK_BOT_TOKEN: 'xoxb-rig', SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_APP_TOKEN: undefined, SLACK_API_URL: slack.apiUrl },
        config,
        releases: store,
        logger: log.logger,
      });
      await app.start();
      const server = await serveSlackEvents(app.handleSlackRequest!);
      sender = new SignedSender({ url: server.url, signingSecret: SIGNING_SECRET });
      const reducer = new FactReducer({
        config,
        store,
        targets: new TargetIndex(connection, keys, { forgetAfterMs: config.settings.forgetTargetAfterMinutes * 60_000, cacheMs: 0 }),
        facts,
        watchdog,
        threads: new SlackOutbox(slackQueue),
        metrics: createMetrics({ defaultMetrics: false }),
        logger: log.logger,
      });
      const reducerWorker = startReducerWorker(reducer, { connection, prefix, concurrency: options.concurrency ?? 4, logger: log.logger });
      const writer = new SlackWriter({
        connection,
        redis: connection,
        keys,
        client: app.client,
        releases: store,
        pipeline: (name) => config.pipelines.find((p) => p.name === name),
        logger: log.logger,
        metrics: slackMetrics,
        finishedTtlMs: config.settings.finishedReleaseTtlHours * 3_600_000,
        ...(options.budgets ? { budgets: options.budgets } : {}),
        concurrency: options.concurrency ?? 4,
      });
      writer.start();
      bot = { app, reducer: reducerWorker, writer, server };
    },
    async stopBot() {
      if (!bot) return;
      await bot.reducer.close();
      await bot.writer.close();
      await bot.server.close();
      await bot.app.stop();
      bot = undefined;
    },
    async add(fact) {
      await facts.add(fact);
    },
    async addAndReduce(fact) {
      await facts.add(fact);
      const states = ['active', 'waiting', 'delayed', 'prioritized'] as const;
      for (;;) {
        const counts = await facts.queue.getJobCounts(...states);
        if (Object.values(counts).every((n) => n === 0)) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async idle() {
      const states = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;
      const [a, b] = await Promise.all([facts.queue.getJobCounts(...states), slackQueue.getJobCounts(...states)]);
      return [...Object.values(a), ...Object.values(b)].every((n) => n === 0);
    },
    async close() {
      await rig.stopBot();
      for (const q of [facts.queue, watchdog.queue, slackQueue]) {
        await q.obliterate({ force: true }).catch(() => undefined);
        await q.close();
      }
      await slack.close();
      await deletePrefix(redis, prefix);
      for (const c of connections) c.disconnect();
    },
  };
  return rig;
}
