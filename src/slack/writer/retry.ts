/**
 * How long and how often the writer retries a Slack call that failed for a reason time can fix
 * (5xx, dropped connections, timeouts; 429s wait for their Retry-After instead). Exponential
 * from `baseMs`, capped at `capMs`, with jitter so a recovering Slack is not hit by every job at
 * once; after `maxMs` of failing the job gives up with an error log and a metric.
 */
export interface RetryPolicy {
  baseMs: number;
  capMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1_000, capMs: 5 * 60_000, maxMs: 24 * 3_600_000 };

/** What a job carries about its failures: how many so far and when the first one was seen. */
export interface RetryState {
  attempts: number;
  since: number;
}

/** Delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, between 50% and 100% of that. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.max(1, Math.round(exp * (0.5 + random() * 0.5)));
}
