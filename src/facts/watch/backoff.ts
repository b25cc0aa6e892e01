/**
 * How long a list+watch waits before asking the API server again after it said no (410 on every
 * resume, 5xx, 429, a watch that ends at once): exponential in the number of failures in a row,
 * with a ceiling, and jittered so that the watches of many replicas and scopes that failed
 * together (an API server restart) do not come back together. Pure, for unit tests.
 *
 * The jitter is "equal jitter": a delay lies in [base/2, base], so the n-th delay is never shorter
 * than the (n-1)-th one's upper half; the rate falls steadily while the server keeps refusing.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/**
 * A `Retry-After` is honoured even past `maxMs`, but only up to this: a server saying "come back
 * tomorrow" is not taken at its word (a watch that never resumes loses every fact).
 */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * The wait before the next request, after `failures` failures in a row (0: none, ask at once).
 * `retryAfterMs` (the server's Retry-After) is a floor, never a way to shorten the backoff.
 */
export function backoffDelayMs(failures: number, policy: BackoffPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  if (failures <= 0 && retryAfterMs === undefined) return 0;
  const initial = Math.max(1, policy.initialMs);
  const max = Math.max(initial, policy.maxMs);
  // 2^(failures-1), without overflow for a long outage.
  const base = failures <= 0 ? 0 : Math.min(max, initial * 2 ** Math.min(failures - 1, 40));
  const jittered = base / 2 + (base / 2) * Math.min(1, Math.max(0, random()));
  const floor = retryAfterMs === undefined ? 0 : Math.min(Math.max(0, retryAfterMs), Math.max(max, MAX_RETRY_AFTER_MS));
  return Math.round(Math.max(jittered, floor));
}
