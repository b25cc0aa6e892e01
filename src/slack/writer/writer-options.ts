/** What a Slack writer is built from. */
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PipelineConfig } from '../../config/file.js';
import type { ReleaseReader } from '../../releases/ports.js';
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
  pipeline(name: string): PipelineConfig | undefined;
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
}
