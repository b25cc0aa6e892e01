import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackBudgets } from '../../src/slack/writer/budget.js';
import { createKeys } from '../../src/store/keys.js';
import { deletePrefix, redisClient, testPrefix } from '../helpers/slack-harness.js';

let redis: Redis;
const prefix = testPrefix();
beforeAll(() => {
  redis = redisClient();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function budgets(clock: { t: number }): SlackBudgets {
  return new SlackBudgets(redis, createKeys(prefix), () => clock.t);
}

describe('Slack budgets (token buckets in Redis, shared by replicas)', () => {
  const perSecond = { burst: 2, perMinute: 60 };

  it('allows a burst, then one call per refill', async () => {
    const clock = { t: 1_000_000 };
    const b = budgets(clock);
    expect([await b.take('burst', perSecond), await b.take('burst', perSecond), await b.take('burst', perSecond)]).toEqual([0, 0, 1000]);
    clock.t += 1000;
    expect(await b.take('burst', perSecond)).toBe(0);
  });

  it('books slots first come, first served when callers book', async () => {
    const clock = { t: 2_000_000 };
    const b = budgets(clock);
    const waits = [];
    for (let i = 0; i < 5; i += 1) waits.push(await b.take('book', perSecond, { book: true }));
    expect(waits).toEqual([0, 0, 1000, 2000, 3000]);
  });

  it('keeps tokens back for booked callers: routine callers wait while slots are owed', async () => {
    const clock = { t: 3_000_000 };
    const b = budgets(clock);
    expect(await b.take('mixed', perSecond, { reserve: 1 })).toBe(0);
    expect(await b.take('mixed', perSecond, { reserve: 1 })).toBe(1000);
    expect(await b.take('mixed', perSecond, { book: true })).toBe(0);
    expect(await b.take('mixed', perSecond, { book: true })).toBe(1000);
    // One slot is owed: a routine caller needs the debt repaid and a token to spare.
    expect(await b.take('mixed', perSecond, { reserve: 1 })).toBe(3000);
  });

  it('blocks everyone until a 429 Retry-After has passed, then lets one call through', async () => {
    const clock = { t: 4_000_000 };
    const b = budgets(clock);
    await b.block('blocked', 7000);
    expect(await b.take('blocked', perSecond)).toBe(7000);
    expect(await b.take('blocked', perSecond, { book: true })).toBe(7000);
    expect(await b.take('blocked', perSecond, { book: true })).toBe(8000);
    // Both booked slots (7 s and 8 s) have passed; one more token refilled by 9 s.
    clock.t += 9000;
    expect(await b.take('blocked', perSecond)).toBe(0);
    expect(await b.take('blocked', perSecond)).toBe(1000);
  });

  it('gives back the token of a call Slack refused, so its retry does not queue behind itself', async () => {
    const clock = { t: 5_000_000 };
    const b = budgets(clock);
    expect(await b.take('refund', perSecond, { book: true })).toBe(0);
    expect(await b.take('refund', perSecond, { book: true })).toBe(0);
    await b.block('refund', 1000);
    expect(await b.take('refund', perSecond, { book: true })).toBe(1000);
    expect(await b.take('refund', perSecond, { book: true })).toBe(2000);
  });
});
