/**
 * How often Glidepath asks Argo CD again to refresh a child that stays stale. A refresh asked once
 * can be taken and do nothing (argo-cd#29347): the child then moves on only at the controller's
 * periodic resync (2 min + jitter). So a child whose request was taken (the annotation is gone) and
 * that is still stale is asked again, in rounds, each after a longer wait, up to a bound: a
 * controller that drops every request would otherwise be asked forever.
 */

export interface RefreshRounds {
  /** Rounds of refresh requests in all, the first one included. */
  maxRounds: number;
  /** Wait after the first round before the second; doubled after each round. */
  backoffMs: number;
  /** Longest wait between two rounds. */
  maxBackoffMs: number;
}

export const DEFAULT_REFRESH_ROUNDS: RefreshRounds = { maxRounds: 4, backoffMs: 2_000, maxBackoffMs: 30_000 };

/** The wait after round `round` (1-based) before the next one may start. */
export function backoffAfter(rounds: RefreshRounds, round: number): number {
  return Math.min(rounds.maxBackoffMs, rounds.backoffMs * 2 ** Math.max(0, round - 1));
}

/** "1 refresh round", "3 refresh rounds". */
export function roundsText(rounds: number): string {
  return `${rounds} refresh round${rounds === 1 ? '' : 's'}`;
}
