/**
 * When a window is open, as pure functions of the time (no clock read here): the config's freezes
 * (a cron schedule plus a duration, or one span) and Argo CD AppProject syncWindows, judged as
 * Argo CD judges a manual sync (argo-cd `SyncWindows.CanSync(isManual=true)`, types.go).
 *
 * Cron is read by cron-parser (the one home for cron here; see the lead's note in the freeze
 * report: the brief named croner, which is not installed). A schedule is read in its time zone
 * properly, DST included; Argo CD instead shifts the UTC schedule by the zone's offset *now*, so
 * the two differ only within a DST change's hour.
 */
import { CronExpressionParser } from 'cron-parser';

export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Argo CD's parser takes exactly minute, hour, day of month, month and day of week. */
export function validCron(expr: string): boolean {
  if (expr.trim().split(/\s+/).length !== 5) return false;
  try {
    CronExpressionParser.parse(expr, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}

const DURATION_PART = /(\d+(?:\.\d+)?)(h|ms|m|s)/y;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** Go's `time.ParseDuration` for what a window needs (h, m, s, ms; `1h30m`), in ms; undefined when not one or not positive. */
export function parseGoDuration(text: string): number | undefined {
  if (text.length === 0 || text.length > 40) return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const at = DURATION_PART.lastIndex;
    const m = DURATION_PART.exec(text);
    if (!m || m.index !== at) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return total > 0 && Number.isFinite(total) ? Math.round(total) : undefined;
}

/** The zone's offset from UTC at an instant, in ms (Berlin in winter: 3,600,000). */
export function zoneOffsetMs(epochMs: number, tz: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(epochMs))
      .map((p) => [p.type, p.value]),
  );
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * `2026-11-27T16:00` read in `tz` (or with its own offset), as epoch ms; undefined when not such
 * a time. A wall time a DST change skips is read with the offset before the change.
 */
export function parseLocalTime(text: string, tz: string): number | undefined {
  const m = LOCAL_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, offset] = m;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
  const back = new Date(wall);
  if (back.getUTCMonth() !== Number(mo) - 1 || back.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59) return undefined;
  if (offset) {
    if (offset === 'Z') return wall;
    const sign = offset.startsWith('-') ? -1 : 1;
    return wall - sign * (Number(offset.slice(1, 3)) * 3_600_000 + Number(offset.slice(4, 6)) * 60_000);
  }
  // The offset at the guess, then at the corrected instant (they differ only near a DST change).
  const first = wall - zoneOffsetMs(wall, tz);
  return wall - zoneOffsetMs(first, tz);
}

/** "16:00 Europe/Berlin" when on the same local day as `now`, else "Sat 2026-11-28 16:00 Europe/Berlin". */
export function formatInZone(epochMs: number, tz: string, now: number): string {
  const local = (t: number) => new Date(t + zoneOffsetMs(t, tz)).toISOString();
  const at = local(epochMs);
  const time = at.slice(11, 16);
  if (at.slice(0, 10) === local(now).slice(0, 10)) return `${time} ${tz}`;
  const weekday = new Date(at).toLocaleDateString('en-US', { weekday: 'short', timeZone: 'UTC' });
  return `${weekday} ${at.slice(0, 10)} ${time} ${tz}`;
}

export type TimeWindow = { kind: 'span'; start: number; end: number } | { kind: 'cron'; schedule: string; durationMs: number; timeZone: string };

/** Overlapping occurrences (a duration longer than the schedule's interval) read as one window; bounded. */
const MAX_CHAINED = 1000;

/** When the window is open at `now`: the instant it closes; undefined when closed. */
export function openUntil(window: TimeWindow, now: number): number | undefined {
  if (window.kind === 'span') return window.start <= now && now < window.end ? window.end : undefined;
  const latest = CronExpressionParser.parse(window.schedule, { currentDate: new Date(now + 1), tz: window.timeZone }).prev().getTime();
  let end = latest + window.durationMs;
  if (now >= end) return undefined;
  const later = CronExpressionParser.parse(window.schedule, { currentDate: new Date(latest), tz: window.timeZone });
  for (let i = 0; i < MAX_CHAINED; i++) {
    const next = later.next().getTime();
    if (next > end) break;
    end = Math.max(end, next + window.durationMs);
  }
  return end;
}

/** When a cron window next opens after `now` (for "closed until the allow window opens at …"). */
export function nextOpening(window: Extract<TimeWindow, { kind: 'cron' }>, now: number): number {
  return CronExpressionParser.parse(window.schedule, { currentDate: new Date(now), tz: window.timeZone }).next().getTime();
}
