/**
 * The facts queue's batches on a real Redis, with no worker: facts queued in one turn travel as
 * one job; a batch's claim says which facts are its own to reduce (its retry keeps them, another
 * job carrying the same observation does not) and takes them off the count backpressure reads.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FactClaims, factsOfJob, FACT_BATCH_JOB, FACTS_PER_JOB, FORWARDED_JOB, type QueuedFact } from '../../src/facts/fact-batches.js';
import { FactQueue } from '../../src/facts/fact-queue.js';
import { createKeys } from '../../src/store/keys.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';

const prefix = uniquePrefix();
const keys = createKeys(prefix);
let redis: Redis;
let queue: FactQueue;
let claims: FactClaims;

/** A distinct observation of Rollout `name` per resourceVersion. */
const fact = (name: string, rv: number) =>
  rolloutFact(rolloutBody({ name, uid: `uid-${name}`, generation: 2, rv, releaseId: 'rel-1', podHash: 'h1', stableRS: 'h0', step: 1, phase: 'Progressing' }), 1_787_000_000_000 + rv);

beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  queue = new FactQueue(redis, keys, []);
  claims = new FactClaims(redis, keys);
});
afterAll(async () => {
  await queue.close();
  redis.disconnect();
  await dropPrefix(prefix);
});

const nameOf = (q: QueuedFact) => (q.fact.kind === 'rollout' ? q.fact.target.name : q.fact.kind);
const waitingJobs = () => queue.queue.getJobs(['waiting']);

describe('facts travel in batches', () => {
  it('facts queued in one turn are one job, each under its identity; a repeat is not its own to reduce, a retry keeps its facts', async () => {
    const [a, b] = [fact('cart', 1), fact('pay', 2)];
    const ids = await Promise.all([queue.add(a), queue.add(b), queue.add(a)]);
    expect(ids[0]).toBe(ids[2]);
    expect(ids[0]).not.toBe(ids[1]);
    const [job, ...others] = await waitingJobs();
    expect(others).toHaveLength(0);
    expect(job!.name).toBe(FACT_BATCH_JOB);
    expect(factsOfJob(job!).map((q) => nameOf(q))).toEqual(['cart', 'pay', 'cart']);
    expect(await queue.waiting()).toBe(3);

    const first = await claims.claim(0, job!);
    expect(first.mine.map((q) => nameOf(q))).toEqual(['cart', 'pay']);
    expect(first.repeats.map((q) => nameOf(q))).toEqual(['cart']);
    // Retried (its worker died, or a fact failed): the same facts are its own again.
    expect((await claims.claim(0, job!)).mine.map((q) => q.id)).toEqual(first.mine.map((q) => q.id));

    // The same observation again later, with a new one: only the new one is the new job's.
    await Promise.all([queue.add(fact('cart', 1)), queue.add(fact('cart', 3))]);
    const later = (await waitingJobs()).find((j) => j.id !== job!.id)!;
    const second = await claims.claim(0, later);
    expect(second.mine.map((q) => q.fact.kind === 'rollout' && q.fact.rollout.resourceVersion)).toEqual(['3']);
    expect(second.repeats).toHaveLength(1);
  });

  it('the waiting count backpressure reads loses each batch once it is taken, however often it is claimed', async () => {
    const before = Number(await redis.get(keys.factsWaiting(0)));
    await Promise.all(Array.from({ length: 5 }, (_, i) => queue.add(fact(`svc-${i}`, 100 + i))));
    expect(Number(await redis.get(keys.factsWaiting(0)))).toBe(before + 5);
    const job = (await waitingJobs()).find((j) => factsOfJob(j).length === 5)!;
    await claims.claim(0, job);
    await claims.claim(0, job);
    expect(Number(await redis.get(keys.factsWaiting(0)))).toBe(before);
  });

  it('a job of one fact, as replicas before batches queued it, is still taken whole: BullMQ deduplicated it by job id', async () => {
    const old = await queue.queue.add('rollout', fact('legacy', 7), { jobId: 'rollout-legacy-7' });
    const forwarded = await queue.queue.add(FORWARDED_JOB, { fact: fact('legacy', 8), pipeline: 'shop' }, { jobId: 'rollout-legacy-8-to-shop' });
    const taken = [await claims.claim(0, old), await claims.claim(0, forwarded)];
    expect(taken.map(({ mine }) => mine.map((q) => [q.id, nameOf(q), q.pipeline]))).toEqual([[['rollout-legacy-7', 'legacy', undefined]], [['rollout-legacy-8-to-shop', 'legacy', 'shop']]]);
    expect(taken.flatMap((t) => t.repeats)).toHaveLength(0);
    await Promise.all([old.remove(), forwarded.remove()]);
  });

  it('a count left high by a job removed untaken is set back once no job waits: backpressure does not refuse for facts that are gone', async () => {
    const own = uniquePrefix();
    const ownKeys = createKeys(own);
    const drained = new FactQueue(redis, ownKeys, []);
    try {
      await Promise.all([0, 1, 2].map((i) => drained.add(fact(`gone-${i}`, 200 + i))));
      const [job] = await drained.queue.getJobs(['waiting']);
      await job!.remove();
      expect(await drained.waiting()).toBe(0);
      await Promise.all([0, 1].map((i) => drained.add(fact(`new-${i}`, 300 + i))));
      expect(await drained.waiting()).toBe(2);
    } finally {
      await drained.close();
      await dropPrefix(own);
    }
  });

  it(`a burst is cut into jobs of at most ${FACTS_PER_JOB} facts`, async () => {
    const seen = new Set((await waitingJobs()).map((j) => j.id));
    await Promise.all(Array.from({ length: FACTS_PER_JOB * 2 + 3 }, (_, i) => queue.add(fact(`burst-${i}`, 1_000 + i))));
    const sizes = (await waitingJobs()).filter((j) => !seen.has(j.id)).map((j) => factsOfJob(j).length);
    expect(sizes.sort((x, y) => y - x)).toEqual([FACTS_PER_JOB, FACTS_PER_JOB, 3]);
  });
});
