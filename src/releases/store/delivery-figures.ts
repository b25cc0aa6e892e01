/**
 * Delivery figures of a pipeline (docs/operations.md "Delivery figures"): what its daily roll-ups
 * (delivery-stats.ts) add up to over the last days. Pure: the store reads the days, this counts.
 *
 * Definitions, per release of the pipeline, each counted once however often its status comes back:
 * - started: its record was opened (a CI announcement or its first fact), on that day;
 * - completed / failed / aborted / superseded: it reached that status, on that day;
 * - ended: it first reached Complete, Failed or Aborted (the day of the first); of those, `troubled`
 *   failed or were aborted (at any time): the share is troubled / ended;
 * - lead time: from its record's opening to its last stage healthy, kept on the day it completed;
 * - recovery: from the earliest failure or abort not yet followed by a Complete release of the
 *   pipeline, to the next one that completes (that one's day).
 */
import { utcDay } from '../../time/utc-day.js';

export const DAY_MS = 86_400_000;

/** The counters a day's roll-up holds (hash fields of the same names). */
export const DELIVERY_COUNTERS = ['started', 'completed', 'failed', 'aborted', 'superseded', 'ended', 'troubled'] as const;
export type DeliveryCounter = (typeof DELIVERY_COUNTERS)[number];


/** Durations kept per day and kind (lead, recovery): enough for a median of any real day, bounded for a runaway one. */
export const DURATIONS_PER_DAY = 500;

export interface DayRollup {
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  counts: Record<DeliveryCounter, number>;
  leadMs: number[];
  recoveryMs: number[];
}

export interface DeliveryFigures {
  days: number;
  counts: Record<DeliveryCounter, number>;
  /** troubled / ended; undefined when no release ended. */
  failureShare?: number;
  medianLeadMs?: number;
  medianRecoveryMs?: number;
  /** Per day, oldest first (`days` entries), for the chart. */
  perDay: DayRollup[];
}

/** The `n` UTC days ending with today's, newest first. */
export function lastDays(now: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => utcDay(now - i * DAY_MS));
}

/** The middle value; the mean of the two middle ones for an even count; undefined for none. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function emptyCounts(): Record<DeliveryCounter, number> {
  return Object.fromEntries(DELIVERY_COUNTERS.map((c) => [c, 0])) as Record<DeliveryCounter, number>;
}

const LEAD = 'lead:';
const RECOVERY = 'rec:';

/** Hash field of a release's lead time or of a recovery (ended by that release). */
export const leadField = (releaseId: string): string => `${LEAD}${releaseId}`;
export const recoveryField = (releaseId: string): string => `${RECOVERY}${releaseId}`;

/** A day's roll-up from its hash (an expired or never-written day is all zeros). Unknown or malformed fields are ignored. */
export function parseDayRollup(day: string, hash: Record<string, string>): DayRollup {
  const counts = emptyCounts();
  const leadMs: number[] = [];
  const recoveryMs: number[] = [];
  for (const [field, raw] of Object.entries(hash)) {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) continue;
    if ((DELIVERY_COUNTERS as readonly string[]).includes(field)) counts[field as DeliveryCounter] = value;
    else if (field.startsWith(LEAD)) leadMs.push(value);
    else if (field.startsWith(RECOVERY)) recoveryMs.push(value);
  }
  return { day, counts, leadMs, recoveryMs };
}

/** The figures of the newest `days` of `rollups` (newest first, as lastDays lists them). */
export function figuresOver(rollups: readonly DayRollup[], days: number): DeliveryFigures {
  const window = rollups.slice(0, days);
  const counts = emptyCounts();
  for (const r of window) for (const c of DELIVERY_COUNTERS) counts[c] += r.counts[c];
  const medianLeadMs = median(window.flatMap((r) => r.leadMs));
  const medianRecoveryMs = median(window.flatMap((r) => r.recoveryMs));
  return {
    days,
    counts,
    ...(counts.ended > 0 ? { failureShare: Math.min(1, counts.troubled / counts.ended) } : {}),
    ...(medianLeadMs !== undefined ? { medianLeadMs } : {}),
    ...(medianRecoveryMs !== undefined ? { medianRecoveryMs } : {}),
    perDay: [...window].reverse(),
  };
}
