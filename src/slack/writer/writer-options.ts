/** What a Slack writer is built from. */
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PipelineConfig } from '../../config/file.js';
import type { ReleaseReader } from '../../releases/store/ports.js';
import type { Keys } from '../../store/keys.js';
import type { WriterBudgets } from './budget.js';
import type { SlackWriterMetrics } from './metrics.js';
import type { RetryPolicy } from './retry.js';

export interface SlackWriterOptions {
  /** BullMQ worker connection (maxRetriesPerRequest: null). */
  connection: Redis;
  /** For thread state and budgets; may be the same connection. */
  redis: Redis;
  keys: Keys;
  client: WebClient;
  releases: ReleaseReader;
  /** A generated pipeline this process never saw the objects of is read from the shared record, hence a promise. */
  pipeline(name: string): PipelineConfig | undefined | Promise<PipelineConfig | undefined>;
  /** The parent's line for each stage frozen now (the freeze gate's config freezes), computed here at the edge. */
  frozenStages?(pipeline: PipelineConfig): ReadonlyMap<string, string>;
  logger: Logger;
  metrics: SlackWriterMetrics;
  finishedTtlMs: number;
  /** How long thread state of an unfinished release lives after its last write (settings.unfinishedReleaseTtlDays). */
  unfinishedTtlMs: number;
  budgets?: WriterBudgets;
  concurrency?: number;
  /** Clock of the budgets (tests). */
  now?: () => number;
  /** Backoff for 5xx, dropped connections and timeouts; by default up to 24 h. */
  retry?: RetryPolicy;
  /** Per-call timeout of the writer's own client (default 10 s, as the app's client). */
  callTimeoutMs?: number;
  /** The job lock and the thread lock / reply claim TTL (SLACK_JOB_LOCK_MS, default DEFAULT_SLACK_JOB_LOCK_MS). */
  jobLockMs?: number;
  /**
   * Fraction of Slack's Retry-After the writer waits (default 1). Tests that drive a 429 storm run
   * it at 0.05 so a second of Retry-After is not a second of the suite; the order of calls, the
   * budget block and the reschedule through BullMQ are the same as at 1.
   */
  retryAfterScale?: number;
}

/**
 * A writer stopped mid-job keeps the thread's parent stale until its job lock expires and a
 * stalled check hands the job on, so both are short (BullMQ's default is 30 s each: a 20 s
 * SIGSTOP left the parent InProgress for 30 s). BullMQ renews the lock every half of it on a
 * timer while the job runs, a Slack call in flight included, so a live writer never loses it to
 * a slow call; only a process that cannot run its timers does.
 */
export const DEFAULT_SLACK_JOB_LOCK_MS = 10_000;

export function writerLockOptions(lockMs: number): { lockDuration: number; stalledInterval: number } {
  // A check every half lock: a stopped writer's job is back in the queue at most 1.5 locks after its last renewal.
  return { lockDuration: lockMs, stalledInterval: Math.max(500, Math.floor(lockMs / 2)) };
}
