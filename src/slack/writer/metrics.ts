/** What the writer counts, on a registry passed in (never prom-client's global default). */
import { Counter, Histogram, type Registry } from 'prom-client';

export interface SlackWriterMetrics {
  calls: Counter<'method' | 'outcome'>;
  rateLimited: Counter<'method'>;
  permanentErrors: Counter<'error' | 'method'>;
  budgetDelays: Counter<'budget'>;
  unchangedSkipped: Counter;
  replyLatency: Histogram<'needs_person'>;
}

export function createSlackWriterMetrics(registry: Registry): SlackWriterMetrics {
  return {
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
  };
}
