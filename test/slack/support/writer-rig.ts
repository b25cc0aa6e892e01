/** A Slack writer on real Redis, talking to the stand-in through the real WebClient. */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import type { PipelineConfig } from '../../../src/config/file.js';
import type { ThreadEffect } from '../../../src/releases/ports.js';
import type { ReleaseRecord } from '../../../src/releases/record.js';
import { ReleaseStore } from '../../../src/releases/store.js';
import { startSlackStandIn, type SlackStandIn, type SlackStandInOptions } from '../../../sandbox/slack/server.js';
import { createSlackClient } from '../../../src/slack/client.js';
import type { SlackJob } from '../../../src/slack/writer/jobs.js';
import { createSlackWriterMetrics, type SlackWriterMetrics } from '../../../src/slack/writer/metrics.js';
import { SlackOutbox } from '../../../src/slack/writer/outbox.js';
import { createSlackQueue } from '../../../src/slack/writer/queue.js';
import type { RetryPolicy } from '../../../src/slack/writer/retry.js';
import { SlackWriter, type WriterBudgets } from '../../../src/slack/writer/writer.js';
import { createKeys, type Keys } from '../../../src/store/keys.js';
import { captureLogger, deletePrefix, redisClient, testPrefix, type CapturedLogger } from './harness.js';

export interface WriterRig {
  prefix: string;
  keys: Keys;
  redis: Redis;
  store: ReleaseStore;
  slack: SlackStandIn;
  queue: Queue<SlackJob>;
  outbox: SlackOutbox;
  registry: Registry;
  metrics: SlackWriterMetrics;
  log: CapturedLogger;
  writers: SlackWriter[];
  pipelines: PipelineConfig[];
  startWriter(overrides?: { budgets?: WriterBudgets; concurrency?: number }): SlackWriter;
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
}): Promise<WriterRig> {
  const prefix = testPrefix();
  const keys = createKeys(prefix);
  const redis = redisClient();
  const store = new ReleaseStore(redis, keys, { finishedTtlMs: 600_000 });
  const slack = await startSlackStandIn({ botToken: 'xoxb-test', ...options.standIn });
  const queue = createSlackQueue(redis, prefix);
  const outbox = new SlackOutbox(queue);
  const registry = new Registry();
  const metrics = createSlackWriterMetrics(registry);
  const log = captureLogger();
  const writers: SlackWriter[] = [];
  const connections: Redis[] = [redis];
  const rig: WriterRig = {
    prefix,
    keys,
    redis,
    store,
    slack,
    queue,
    outbox,
    registry,
    metrics,
    log,
    writers,
    pipelines: options.pipelines,
    startWriter(overrides = {}) {
      const connection = redisClient();
      connections.push(connection);
      const writer = new SlackWriter({
        connection,
        redis: connection,
        keys,
        client: createSlackClient('xoxb-test', slack.apiUrl),
        releases: store,
        pipeline: (name) => options.pipelines.find((p) => p.name === name),
        logger: log.logger,
        metrics,
        finishedTtlMs: 600_000,
        ...(overrides.budgets ?? options.budgets ? { budgets: overrides.budgets ?? options.budgets } : {}),
        concurrency: overrides.concurrency ?? 4,
        ...(options.retry ? { retry: options.retry } : {}),
        ...(options.callTimeoutMs ? { callTimeoutMs: options.callTimeoutMs } : {}),
      });
      writer.start();
      writers.push(writer);
      return writer;
    },
    repliesByEffect(channel) {
      const out = new Map<string, number>();
      for (const parent of slack.transcript.messages(channel)) {
        for (const r of parent.replies) {
          const effect = String(r.metadata?.event_payload.effect ?? '(no metadata)');
          out.set(effect, (out.get(effect) ?? 0) + 1);
        }
      }
      return out;
    },
    async save(record, effects) {
      const { saved } = await store.update(record.pipeline, record.releaseId, (current) => ({
        next: { ...record, version: current?.record.version ?? 0 },
        result: null,
      }));
      if (!saved) throw new Error('not saved');
      await outbox.send(saved.record, effects);
      return saved.record;
    },
    async idle() {
      const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized', 'waiting-children');
      return Object.values(counts).every((n) => n === 0);
    },
    async close() {
      for (const w of writers.splice(0)) await w.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await slack.close();
      await deletePrefix(redis, prefix);
      for (const c of connections) c.disconnect();
    },
  };
  return rig;
}
