/** The delivery roll-ups in Redis (own prefix): each release's event counted once, recoveries, bounds and expiry. */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, DURATIONS_PER_DAY } from '../../src/releases/store/delivery-figures.js';
import { utcDay } from '../../src/time/utc-day.js';
import { DELIVERY_RETENTION_MS, DeliveryStats } from '../../src/releases/store/delivery-stats.js';
import { createKeys, type Keys } from '../../src/store/keys.js';
import { deletePrefix, redisClient, testPrefix } from '../helpers/slack-harness.js';

const MINUTE = 60_000;
let redis: Redis;
let keys: Keys;
let stats: DeliveryStats;
const prefix = testPrefix();
beforeAll(() => {
  redis = redisClient();
  keys = createKeys(prefix);
  stats = new DeliveryStats(redis, keys);
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('DeliveryStats', () => {
  it('counts each event of a release once, however often the outbox is dispatched', async () => {
    const now = Date.now();
    const start = now - 60 * MINUTE;
    for (let attempt = 0; attempt < 3; attempt++) {
      await stats.note('once', 'rel-1', { event: 'started', at: start });
      await stats.note('once', 'rel-1', { event: 'completed', at: start + 20 * MINUTE, leadMs: 20 * MINUTE });
    }
    const { week } = await stats.windows('once', now);
    expect(week.counts).toMatchObject({ started: 1, completed: 1, ended: 1, troubled: 0 });
    expect(week.medianLeadMs).toBe(20 * MINUTE);
  });

  it('a completion with no lead time (already healthy when first heard) is counted, and leaves the median lead time to the others', async () => {
    const now = Date.now();
    const start = now - 60 * MINUTE;
    await stats.note('unknown-lead', 'rel-1', { event: 'completed', at: start });
    const first = (await stats.windows('unknown-lead', now)).week;
    expect(first.counts.completed).toBe(1);
    expect(first.medianLeadMs).toBeUndefined();
    await stats.note('unknown-lead', 'rel-2', { event: 'completed', at: start + 30 * MINUTE, leadMs: 30 * MINUTE });
    expect((await stats.windows('unknown-lead', now)).week).toMatchObject({ counts: { completed: 2 }, medianLeadMs: 30 * MINUTE });
  });

  it('a failure is recovered by the next release that completes after it; a release that fails twice is one failure', async () => {
    const now = Date.now();
    const t = now - 5 * 60 * MINUTE;
    await stats.note('mttr', 'rel-1', { event: 'failed', at: t });
    await stats.note('mttr', 'rel-2', { event: 'aborted', at: t + 10 * MINUTE });
    // A completion heard late, older than the failure, ends nothing.
    await stats.note('mttr', 'rel-0', { event: 'completed', at: t - 10 * MINUTE, leadMs: MINUTE });
    await stats.note('mttr', 'rel-3', { event: 'completed', at: t + 45 * MINUTE, leadMs: 30 * MINUTE });
    // After the recovery: a failure, then the same release failed again and recovered itself.
    await stats.note('mttr', 'rel-4', { event: 'failed', at: t + 60 * MINUTE });
    await stats.note('mttr', 'rel-4', { event: 'failed', at: t + 70 * MINUTE });
    await stats.note('mttr', 'rel-4', { event: 'completed', at: t + 75 * MINUTE, leadMs: 80 * MINUTE });
    const { week } = await stats.windows('mttr', now);
    expect(week.counts).toMatchObject({ failed: 2, aborted: 1, completed: 3, ended: 5, troubled: 3 });
    expect(week.failureShare).toBe(0.6);
    expect(week.perDay.flatMap((d) => d.recoveryMs).sort((a, b) => a - b)).toEqual([15 * MINUTE, 45 * MINUTE]);
    expect(week.medianRecoveryMs).toBe(30 * MINUTE);
    expect(await redis.exists(keys.deliveryOpenFailure('mttr'))).toBe(0);
  });

  it('keeps 30 days: a day 10 days ago is in the month and not the week', async () => {
    const now = Date.now();
    await stats.note('months', 'old', { event: 'completed', at: now - 10 * DAY_MS, leadMs: 90 * MINUTE });
    await stats.note('months', 'new', { event: 'completed', at: now, leadMs: 30 * MINUTE });
    const { week, month } = await stats.windows('months', now);
    expect([week.counts.completed, month.counts.completed]).toEqual([1, 2]);
    expect([week.medianLeadMs, month.medianLeadMs]).toEqual([30 * MINUTE, 60 * MINUTE]);
  });

  it('every key expires, a day 32 days after its end; durations kept per day are bounded, counters not', async () => {
    const at = Date.now();
    const notes = Array.from({ length: DURATIONS_PER_DAY + 20 }, (_, i) => stats.note('busy', `rel-${i}`, { event: 'completed', at, leadMs: i * 1000 }));
    await Promise.all(notes);
    await stats.note('busy', 'bad', { event: 'failed', at });
    const day = keys.deliveryDay('busy', utcDay(at));
    const fields = await redis.hkeys(day);
    expect(fields.filter((f) => f.startsWith('lead:'))).toHaveLength(DURATIONS_PER_DAY);
    expect(await redis.hget(day, 'completed')).toBe(String(DURATIONS_PER_DAY + 20));
    const dayEnd = Date.parse(`${utcDay(at)}T00:00:00Z`) + DAY_MS;
    const ttl = await redis.pttl(day);
    // It expires at the end of its day plus the retention: no sooner than that, read after the PTTL (no slack for a slow machine).
    const readAt = Date.now();
    expect(ttl).toBeGreaterThanOrEqual(dayEnd + DELIVERY_RETENTION_MS - readAt - 1);
    expect(ttl).toBeLessThanOrEqual(dayEnd + DELIVERY_RETENTION_MS - at);
    expect(await redis.pttl(keys.deliveryCounted('busy', 'rel-0'))).toBeGreaterThan(0);
    expect(await redis.pttl(keys.deliveryOpenFailure('busy'))).toBeGreaterThan(0);
  });
});
