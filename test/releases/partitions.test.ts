/**
 * Fact partitions on the shared Redis (a prefix of its own): replicas share K partitions by
 * lease, each aiming for ceil(K / live replicas), never two holding one partition at once; a
 * replica leaving hands its partitions over. And the key-layout refusal at start-up.
 */
import { redisClient } from '../helpers/slack-harness.js';
import { afterEach, describe, expect, it } from 'vitest';
import { partitionOfPipeline } from '../../src/routing/partitions.js';
import { PartitionLeases } from '../../src/releases/worker/partition-leases.js';
import { createKeys, partitionTag } from '../../src/store/keys.js';
import { keySlot } from '../../src/store/slot.js';
import { dropPrefix, startTestGlidepath, testEnv, uniquePrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/wait.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** Every replica's handlers write to one owner map, which refuses a partition taken twice. */
function ownership() {
  const owner = new Map<number, string>();
  const doubles: string[] = [];
  const handlers = (id: string) => ({
    acquired(p: number) {
      if (owner.has(p)) doubles.push(`${id} took ${p} while ${owner.get(p)} worked it`);
      owner.set(p, id);
    },
    async release(p: number) {
      await new Promise((r) => setTimeout(r, 20)); // jobs in hand finishing
      owner.delete(p);
    },
    lost(p: number) {
      owner.delete(p);
    },
  });
  const heldBy = (id: string) => [...owner].filter(([, o]) => o === id).length;
  return { owner, doubles, handlers, heldBy };
}

describe('fact partitions', () => {
  it('two replicas split six partitions 3/3 and a replica leaving hands its partitions to the other; never one partition twice', async () => {
    const prefix = uniquePrefix();
    cleanup.push(() => dropPrefix(prefix));
    const redis = redisClient();
    cleanup.push(async () => redis.disconnect());
    const keys = createKeys(prefix, { partitions: 6 });
    const o = ownership();
    const a = await new PartitionLeases(redis, keys, 'a', 1_500, o.handlers('a')).start();
    cleanup.push(() => a.stop());
    expect(a.status().held).toEqual([0, 1, 2, 3, 4, 5]);

    const b = await new PartitionLeases(redis, keys, 'b', 1_500, o.handlers('b')).start();
    await waitFor(async () => o.heldBy('a') === 3 && o.heldBy('b') === 3, 'a 3/3 split');
    expect(a.healthy().ok && b.healthy().ok).toBe(true);

    await b.stop();
    await waitFor(async () => o.heldBy('a') === 6, 'a to take every partition back');
    expect(o.doubles).toEqual([]);
  });

  it('a pipeline always maps to the same partition, and partition tags spread over the slot space', () => {
    expect(partitionOfPipeline('checkout', 6)).toBe(partitionOfPipeline('checkout', 6));
    const all = new Set(Array.from({ length: 60 }, (_, i) => partitionOfPipeline(`pipeline-${i}`, 6)));
    expect(all.size).toBe(6);
    // Six partitions over three equal shards: two on each.
    const shards = Array.from({ length: 6 }, (_, p) => Math.floor((keySlot(partitionTag(p, 6)) * 3) / 16_384));
    expect(shards.sort()).toEqual([0, 0, 1, 1, 2, 2]);
  });
});

describe('key layout', () => {
  it('refuses to start with another partition count, or another layout version, saying what to do', async () => {
    const env = testEnv();
    cleanup.push(() => dropPrefix(env.REDIS_PREFIX));
    const first = await startTestGlidepath(testConfig(), env, { roles: [] });
    await first.close();

    const other = testEnv({ REDIS_PREFIX: env.REDIS_PREFIX, FACT_PARTITIONS: '4' });
    const refused = await startTestGlidepath(testConfig(), other, { roles: [] }).then(
      (g) => g.close().then(() => undefined),
      (err: Error) => err,
    );
    expect(refused?.message).toMatch(/1 fact partition\(s\).*FACT_PARTITIONS=4.*Set FACT_PARTITIONS=1/);

    const redis = redisClient();
    cleanup.push(async () => redis.disconnect());
    await redis.set(createKeys(env.REDIS_PREFIX).layout(), JSON.stringify({ version: 1, partitions: 1 }));
    const old = await startTestGlidepath(testConfig(), env, { roles: [] }).then(
      (g) => g.close().then(() => undefined),
      (err: Error) => err,
    );
    expect(old?.message).toMatch(/key layout v1 .* expects v2/);
  });
});
