/**
 * The order in which the worker lets children of one ApplicationSet reach their rollout decision
 * (src/releases/worker/turns-in-order.ts): the order the facts were handed in, whichever is ready
 * first, and nothing held up across ApplicationSets. Property-tested over how long each fact's
 * reads take and which ones fail before they get there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TurnsInOrder } from '../../src/releases/worker/turns-in-order.js';

/** One fact: its reads take `hops` turns of the microtask queue, then it decides (or fails first, and never decides). */
async function fact(turns: TurnsInOrder, key: string, id: number, hops: number, fails: boolean, decided: string[]): Promise<void> {
  const turn = turns.take(key);
  try {
    for (let i = 0; i < hops; i++) await new Promise<void>((r) => setImmediate(r));
    if (fails) throw new Error('read failed');
    await turn.ready;
    decided.push(`${key}${id}`);
  } finally {
    turn.done();
  }
}

describe('turns in order', () => {
  it('decisions of one key follow the order turns were taken, however long each fact reads, and a failed fact holds up no one for good', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ key: fc.constantFrom('a', 'b'), hops: fc.integer({ min: 0, max: 6 }), fails: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (facts) => {
        const turns = new TurnsInOrder();
        const decided: string[] = [];
        const results = await Promise.allSettled(facts.map((f, i) => fact(turns, f.key, i, f.hops, f.fails, decided)));
        const expected = facts.map((f, i) => ({ ...f, id: `${f.key}${i}` })).filter((f) => !f.fails);
        for (const key of ['a', 'b']) expect(decided.filter((d) => d.startsWith(key))).toEqual(expected.filter((f) => f.key === key).map((f) => f.id));
        expect(results.filter((r) => r.status === 'rejected')).toHaveLength(facts.filter((f) => f.fails).length);
        // Nothing kept once every turn is done.
        await new Promise<void>((r) => setImmediate(r));
        expect(turns.size).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('a later fact that is ready first waits for the earlier one; one of another ApplicationSet does not', async () => {
    const turns = new TurnsInOrder();
    const decided: string[] = [];
    const slow = fact(turns, 'checkout', 1, 5, false, decided);
    const quick = fact(turns, 'checkout', 2, 0, false, decided);
    const other = fact(turns, 'payments', 1, 0, false, decided);
    await Promise.all([slow, quick, other]);
    expect(decided).toEqual(['payments1', 'checkout1', 'checkout2']);
  });

  it('no key: no wait, nothing kept', async () => {
    const turns = new TurnsInOrder();
    const held = turns.take('checkout');
    const free = turns.take(undefined);
    // Resolves though `checkout`'s turn is still held (a wait here would end the test by its timeout).
    await free.ready;
    expect(turns.size).toBe(1);
    held.done();
    free.done();
    await new Promise<void>((r) => setImmediate(r));
    expect(turns.size).toBe(0);
  });
});
