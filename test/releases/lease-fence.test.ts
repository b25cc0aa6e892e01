/** The lease's fencing epoch against real Redis (own key prefix): two holders, and a write of the first refused after the takeover. */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireLease, stillHolds } from '../../src/store/lease.js';
import { FencedWriteError } from '../../src/releases/store/fence.js';
import { ReleaseStore } from '../../src/releases/store/store.js';
import { createKeys } from '../../src/store/keys.js';
import { keySlot } from '../../src/store/slot.js';
import { dropPrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { fixture } from '../helpers/rollout-bodies.js';

const PREFIX = `test-lease-fence-${process.pid}`;
const redis = new Redis('redis://127.0.0.1:6379');
const keys = createKeys(PREFIX);

afterAll(async () => {
  await dropPrefix(PREFIX);
  redis.disconnect();
});

function aRecord() {
  const h = new Harness(testConfig());
  h.apply(rolloutFact(fixture('paused'), Date.parse('2026-08-20T09:00:00Z')));
  return h.record('rel-4')!;
}

describe('the lease as a fence', () => {
  it('a lease and its epoch share a slot, in the sharded and the one-slot layout', () => {
    for (const k of [createKeys('glidepath', { partitions: 6 }), createKeys('{glidepath}', { partitions: 6 })]) {
      for (let p = 0; p < 6; p++) expect(keySlot(k.partitionLeaseEpoch(p))).toBe(keySlot(k.partitionLease(p)));
      expect(keySlot(k.watchLeaseEpoch('prod east'))).toBe(keySlot(k.watchLease('prod east')));
      expect(k.partitionLeaseEpoch(0).startsWith(k.prefix)).toBe(true);
    }
  });

  it('the second holder\'s epoch is higher; the first no longer holds it, even when the epoch key was lost', async () => {
    const lease = keys.partitionLease(0);
    const epochKey = keys.partitionLeaseEpoch(0);
    const first = await acquireLease(redis, lease, epochKey, 'replica-a', 60_000);
    expect(first).toBeGreaterThan(0);
    expect(await acquireLease(redis, lease, epochKey, 'replica-b', 60_000)).toBeUndefined(); // held
    expect(await stillHolds(redis, lease, epochKey, 'replica-a', first!)).toBe(true);
    await redis.del(lease); // its TTL ran out while replica-a was stopped
    const second = await acquireLease(redis, lease, epochKey, 'replica-b', 60_000);
    expect(second).toBeGreaterThan(first!);
    expect(await stillHolds(redis, lease, epochKey, 'replica-a', first!)).toBe(false);
    expect(await stillHolds(redis, lease, epochKey, 'replica-b', second!)).toBe(true);
    // An epoch never goes back, even without its key (Redis' clock seeds it).
    await redis.del(lease, epochKey);
    expect(await acquireLease(redis, lease, epochKey, 'replica-c', 60_000)).toBeGreaterThan(second!);
  });

  it('a record write with the first holder\'s epoch after the second holder wrote is refused; the record keeps the second\'s', async () => {
    const store = new ReleaseStore(redis, keys, { finishedTtlMs: 3_600_000 });
    const record = aRecord();
    const write = (fence: number, facts: number) => store.update('checkout', 'rel-4', () => ({ next: { ...record, counters: { ...record.counters, facts } }, result: fence }), { fence });
    // Before the takeover the old holder's writes count (the new holder reads them and reduces on top).
    expect((await write(100, 1)).saved?.record.version).toBe(1);
    expect((await write(200, 2)).saved?.record.version).toBe(2);
    await expect(write(100, 99)).rejects.toBeInstanceOf(FencedWriteError);
    const kept = await store.load('checkout', 'rel-4');
    expect(kept?.record.version).toBe(2);
    expect(kept?.record.counters.facts).toBe(2);
    // The same holder again, and a write under no lease (tests, tools), still go through.
    expect((await write(200, 3)).saved?.record.version).toBe(3);
    expect((await store.update('checkout', 'rel-4', () => ({ next: record, result: 0 }))).saved?.record.version).toBe(4);
  });
});
