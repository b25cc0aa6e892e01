/**
 * The delivery roll-ups in Redis: one hash per pipeline per UTC day (counters, and up to
 * DURATIONS_PER_DAY lead and recovery times), written when the worker dispatches a `delivery.note`
 * (delivery-events.ts), read a day at a time: 30 days are 30 hash reads of one pipeline, never a
 * scan of its records. Every key expires (keys.ts): a day 32 days after it ended.
 *
 * Dispatch is at least once (an outbox dispatched again after a crash), so each release's events
 * are counted once: the script marks them in the release's `deliveryCounted` hash first.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';
import type { DeliveryNote } from '../record/record.js';
import { DAY_MS, DURATIONS_PER_DAY, figuresOver, lastDays, leadField, parseDayRollup, recoveryField, type DeliveryFigures } from './delivery-figures.js';
import { utcDay } from '../../time/utc-day.js';

/** How long a day's roll-up and a release's marks are kept: the 30 days read, and a day's margin. */
export const DELIVERY_RETENTION_MS = 32 * DAY_MS;

/*
 * KEYS[1] the release's counted marks (hash), KEYS[2] the event day's roll-up (hash), KEYS[3] the
 * pipeline's open failure (string).
 * ARGV[1] event, ARGV[2] release id, ARGV[3] at (ms), ARGV[4] lead ms ("" unless completed),
 * ARGV[5] TTL ms of the marks and the open failure, ARGV[6] unix ms the day's roll-up expires at,
 * ARGV[7] durations kept per day and kind, ARGV[8] lead field, ARGV[9] recovery field.
 * Returns 1 when counted, 0 when this release's event was counted before.
 */
const NOTE_SCRIPT = `
local event = ARGV[1]
local at = tonumber(ARGV[3])
if redis.call('HSETNX', KEYS[1], event, ARGV[3]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('HINCRBY', KEYS[2], event, 1)
local ends = event == 'completed' or event == 'failed' or event == 'aborted'
if ends and redis.call('HSETNX', KEYS[1], 'ended', ARGV[3]) == 1 then redis.call('HINCRBY', KEYS[2], 'ended', 1) end
if event == 'failed' or event == 'aborted' then
  if redis.call('HSETNX', KEYS[1], 'troubled', ARGV[3]) == 1 then redis.call('HINCRBY', KEYS[2], 'troubled', 1) end
  local open = redis.call('GET', KEYS[3])
  if not open or tonumber(open) > at then redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[5]) end
end
if event == 'completed' then
  local cap = tonumber(ARGV[7])
  if ARGV[4] ~= '' and tonumber(redis.call('HGET', KEYS[2], 'nlead') or '0') < cap then
    redis.call('HSET', KEYS[2], ARGV[8], ARGV[4])
    redis.call('HINCRBY', KEYS[2], 'nlead', 1)
  end
  local open = redis.call('GET', KEYS[3])
  -- A completion older than the failure (facts out of order) does not end it.
  if open and tonumber(open) <= at then
    redis.call('DEL', KEYS[3])
    if tonumber(redis.call('HGET', KEYS[2], 'nrec') or '0') < cap then
      redis.call('HSET', KEYS[2], ARGV[9], tostring(at - tonumber(open)))
      redis.call('HINCRBY', KEYS[2], 'nrec', 1)
    end
  end
end
redis.call('PEXPIREAT', KEYS[2], ARGV[6])
return 1
`;

/** The figures of one pipeline over the last 7 and 30 days. */
export interface DeliveryWindows {
  week: DeliveryFigures;
  month: DeliveryFigures;
}

/** What the App Home and /glidepath stats read. */
export interface DeliveryReader {
  windows(pipeline: string, now: number): Promise<DeliveryWindows>;
  /** The windows of several pipelines in one round trip. */
  windowsOf(pipelines: readonly string[], now: number): Promise<Map<string, DeliveryWindows>>;
}

type RedisWithNote = Redis & { glidepathDeliveryNote(...args: string[]): Promise<number> };

export class DeliveryStats implements DeliveryReader {
  private readonly redis: RedisWithNote;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    if (!('glidepathDeliveryNote' in redis)) redis.defineCommand('glidepathDeliveryNote', { numberOfKeys: 3, lua: NOTE_SCRIPT });
    this.redis = redis as RedisWithNote;
  }

  /** Counts one event of one release (once: a second note of the same event changes nothing). Returns whether it counted. */
  async note(pipeline: string, releaseId: string, note: Pick<DeliveryNote, 'event' | 'at' | 'leadMs'>): Promise<boolean> {
    const day = utcDay(note.at);
    const expiresAt = Date.parse(`${day}T00:00:00Z`) + DAY_MS + DELIVERY_RETENTION_MS;
    const counted = await this.redis.glidepathDeliveryNote(
      this.keys.deliveryCounted(pipeline, releaseId),
      this.keys.deliveryDay(pipeline, day),
      this.keys.deliveryOpenFailure(pipeline),
      note.event,
      releaseId,
      String(Math.round(note.at)),
      note.leadMs !== undefined ? String(Math.round(note.leadMs)) : '',
      String(DELIVERY_RETENTION_MS),
      String(expiresAt),
      String(DURATIONS_PER_DAY),
      leadField(releaseId),
      recoveryField(releaseId),
    );
    return counted === 1;
  }

  async windows(pipeline: string, now: number): Promise<DeliveryWindows> {
    return (await this.windowsOf([pipeline], now)).get(pipeline) as DeliveryWindows;
  }

  async windowsOf(pipelines: readonly string[], now: number): Promise<Map<string, DeliveryWindows>> {
    const days = lastDays(now, 30);
    const pipe = this.redis.pipeline();
    for (const p of pipelines) for (const day of days) pipe.hgetall(this.keys.deliveryDay(p, day));
    const rows = (await pipe.exec()) ?? [];
    const out = new Map<string, DeliveryWindows>();
    pipelines.forEach((p, i) => {
      const rollups = days.map((day, j) => {
        const [err, value] = rows[i * days.length + j] ?? [null, {}];
        if (err) throw err;
        return parseDayRollup(day, (value ?? {}) as Record<string, string>);
      });
      out.set(p, { week: figuresOver(rollups, 7), month: figuresOver(rollups, 30) });
    });
    return out;
  }
}
