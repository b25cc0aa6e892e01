/** What the writer counts, on a registry passed in (never prom-client's global default). */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Keys } from '../../store/keys.js';

/** The queue and Redis the pending/retrying gauges read at scrape time. */
export interface QueueSource {
  queue: Queue;
  redis: Redis;
  keys: Keys;
}

export interface SlackWriterMetrics {
  /** Points the pending/retrying gauges at a queue and its Redis (a starting writer calls it). */
  watch(source: QueueSource): void;
  calls: Counter<'method' | 'outcome'>;
  rateLimited: Counter<'method'>;
  permanentErrors: Counter<'error' | 'method'>;
  budgetDelays: Counter<'budget'>;
  unchangedSkipped: Counter;
  replyLatency: Histogram<'needs_person'>;
  retries: Counter<'method' | 'error'>;
  gaveUp: Counter<'job' | 'error'>;
  adopted: Counter<'kind'>;
  /** Writes refused because this writer lost the job lock, thread lock or reply claim it worked under. */
  fencedWrites: Counter<'what'>;
  /** Read from Redis at scrape time, once a writer started (see watch). */
  pending: Gauge<'state'>;
  retrying: Gauge;
  oldestFailure: Gauge;
}

export function createSlackWriterMetrics(registry: Registry): SlackWriterMetrics {
  let source: QueueSource | undefined;
  const metrics: SlackWriterMetrics = {
    watch: (s) => {
      source = s;
    },
    calls: new Counter({ name: 'glidepath_slack_calls_total', help: 'Slack Web API calls by method and outcome', labelNames: ['method', 'outcome'], registers: [registry] }),
    rateLimited: new Counter({ name: 'glidepath_slack_rate_limited_total', help: '429 answers from Slack, by method', labelNames: ['method'], registers: [registry] }),
    permanentErrors: new Counter({
      name: 'glidepath_slack_permanent_errors_total',
      help: 'Slack errors no retry fixes (channel_not_found, not_in_channel, invalid_auth, ...)',
      labelNames: ['error', 'method'],
      registers: [registry],
    }),
    budgetDelays: new Counter({ name: 'glidepath_slack_budget_delays_total', help: 'Jobs delayed to stay within a Slack rate budget', labelNames: ['budget'], registers: [registry] }),
    unchangedSkipped: new Counter({ name: 'glidepath_slack_unchanged_renders_total', help: 'Parent renders identical to what Slack shows, so nothing was sent', registers: [registry] }),
    replyLatency: new Histogram({
      name: 'glidepath_slack_reply_seconds',
      help: 'Seconds from a reply being queued to Slack accepting it',
      labelNames: ['needs_person'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    retries: new Counter({ name: 'glidepath_slack_retries_total', help: 'Slack calls that failed for a reason time can fix (5xx, connection, timeout) and were rescheduled with backoff', labelNames: ['method', 'error'], registers: [registry] }),
    gaveUp: new Counter({ name: 'glidepath_slack_gave_up_total', help: 'Slack jobs dropped after failing for longer than the retry window', labelNames: ['job', 'error'], registers: [registry] }),
    adopted: new Counter({ name: 'glidepath_slack_adopted_posts_total', help: 'Posts Slack had taken although its answer was lost, found by metadata and adopted instead of posted again', labelNames: ['kind'], registers: [registry] }),
    fencedWrites: new Counter({ name: 'glidepath_slack_fenced_writes_total', help: 'Slack posts, edits and thread saves not made because this writer lost the lock it worked under (paused past its TTL), by what: job, thread, reply', labelNames: ['what'], registers: [registry] }),
    pending: new Gauge({
      name: 'glidepath_slack_pending_jobs',
      help: 'Slack jobs (parents and replies) not yet done, by state',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        if (!source) return;
        const counts = await source.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed');
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    }),
    retrying: new Gauge({
      name: 'glidepath_slack_retrying_jobs',
      help: 'Slack jobs retrying after failures (Slack down, 5xx, timeouts)',
      registers: [registry],
      async collect() {
        if (source) this.set(await source.redis.zcard(source.keys.slackRetrying()));
      },
    }),
    oldestFailure: new Gauge({
      name: 'glidepath_slack_oldest_failure_seconds',
      help: 'How long the longest-failing Slack job has been failing (0 when none is): the stall clock of Slack delivery',
      registers: [registry],
      async collect() {
        if (!source) return;
        const [, score] = await source.redis.zrange(source.keys.slackRetrying(), 0, 0, 'WITHSCORES');
        this.set(score ? Math.max(0, (Date.now() - Number(score)) / 1000) : 0);
      },
    }),
  };
  return metrics;
}
