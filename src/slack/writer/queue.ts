/** The "slack" queue, under the same Redis prefix (hash tag) as every other Glidepath key. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Env } from '../../config/env.js';
import { SLACK_QUEUE, type SlackJob } from './jobs.js';
import type { RetryPolicy } from './retry.js';
import { DEFAULT_BUDGETS, type WriterBudgets } from './writer.js';

export function createSlackQueue(connection: Redis, prefix: string): Queue<SlackJob> {
  const queue = new Queue<SlackJob>(SLACK_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: {
      // Slack failures are retried by the writer itself (for hours, see RetryPolicy); these
      // attempts only cover the unexpected (a bug, Redis errors mid-job).
      attempts: 10,
      backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: { age: 3_600, count: 5_000 },
      removeOnFail: { age: 7 * 24 * 3_600, count: 10_000 },
    },
  });
  // Connection errors surface on the calls that fail; unhandled 'error' events would crash the process.
  queue.on('error', () => undefined);
  return queue;
}

export function writerBudgetsFromEnv(
  env: Pick<Env, 'SLACK_UPDATES_PER_MINUTE' | 'SLACK_POSTS_PER_CHANNEL_PER_MINUTE'> & Partial<Pick<Env, 'SLACK_HISTORY_READS_PER_MINUTE'>>,
): WriterBudgets {
  return {
    postPerChannel: { ...DEFAULT_BUDGETS.postPerChannel, perMinute: env.SLACK_POSTS_PER_CHANNEL_PER_MINUTE },
    update: { ...DEFAULT_BUDGETS.update, perMinute: env.SLACK_UPDATES_PER_MINUTE },
    history: { ...DEFAULT_BUDGETS.history!, perMinute: env.SLACK_HISTORY_READS_PER_MINUTE ?? DEFAULT_BUDGETS.history!.perMinute },
  };
}

export function writerRetryFromEnv(env: Pick<Env, 'SLACK_RETRY_MAX_HOURS' | 'SLACK_RETRY_BASE_MS' | 'SLACK_RETRY_CAP_SECONDS'>): RetryPolicy {
  return { baseMs: env.SLACK_RETRY_BASE_MS, capMs: env.SLACK_RETRY_CAP_SECONDS * 1000, maxMs: env.SLACK_RETRY_MAX_HOURS * 3_600_000 };
}
