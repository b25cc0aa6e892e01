/** What the config's settings mean in the units the code uses: stall times, TTLs, watch bounds, refresh rounds. */
import type { ConfigFile, PipelineConfig, StageConfig } from './file.js';

/** How long a release may hear nothing before its stall alert, for a stage (its own, its pipeline's, or the default). */
export function stallAfterMs(cfg: ConfigFile, p: PipelineConfig, s?: StageConfig): number {
  return (s?.stallAfterMinutes ?? p.stallAfterMinutes ?? cfg.settings.stallAfterMinutes) * 60_000;
}

/** How long a finished release's record, and its Slack thread state, live after its last write. */
export function finishedTtlMs(cfg: ConfigFile): number {
  return cfg.settings.finishedReleaseTtlHours * 3_600_000;
}

/** How long an unfinished release's record, and its Slack thread state, live after its last write. */
export function unfinishedTtlMs(cfg: ConfigFile): number {
  return cfg.settings.unfinishedReleaseTtlDays * 86_400_000;
}

/** The bounds of every cluster watch stream, in bytes (the settings are in MiB). */
export function watchBoundsBytes(cfg: ConfigFile): { maxLineBytes: number; maxStreamBytes: number } {
  return { maxLineBytes: cfg.settings.watchMaxLineMiB * 1024 * 1024, maxStreamBytes: cfg.settings.watchMaxStreamMiB * 1024 * 1024 };
}

/** The longest a release record, and everything kept for it, may live after its last write. */
export function longestReleaseTtlMs(cfg: ConfigFile): number {
  return Math.max(unfinishedTtlMs(cfg), finishedTtlMs(cfg));
}

/** The refresh rounds of `freshness --refresh` and Refresh-and-approve (src/kube/refresh-rounds.ts), in ms. */
export function freshnessRefreshRounds(cfg: ConfigFile): { maxRounds: number; backoffMs: number; maxBackoffMs: number } {
  const r = cfg.settings.freshnessRefresh;
  return { maxRounds: r.rounds, backoffMs: r.backoffSeconds * 1000, maxBackoffMs: Math.max(r.backoffSeconds, r.maxBackoffSeconds) * 1000 };
}
