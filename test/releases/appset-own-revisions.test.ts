/**
 * Each ApplicationSet child judged at its own revision, through the worker's routing and batch
 * step (test/helpers/reduce-harness.ts): one release (CI's release id in the template), a
 * revision per child, and a child still Degraded from the previous revision. Whatever the order
 * and repetition of the facts, that Degraded is no failure of this release (its step had not
 * reached it), each reply is sent once, and the release ends Complete with every row at its
 * child's own revision.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stepRow } from '../../src/slack/render/step-row.js';
import { APPSET_PIPELINE, APPSET_STEPS, OWN_REVISIONS as OWN, appSetPipelineConfig, factOf, rollingSyncTimeline, type Observation } from '../helpers/appset-world.js';
import { Harness } from '../helpers/reduce-harness.js';

const RELEASE = 'rel-2026-08-20.1';
const T0 = Date.parse('2026-08-20T10:00:00Z');
const config = appSetPipelineConfig();
// checkout-us was Degraded at the previous revision: the new one is what repairs it.
const timeline = rollingSyncTimeline(APPSET_STEPS, (n) => OWN[n]!, { releaseId: RELEASE, degradedBefore: 'checkout-us' });

function resync(delivered: readonly Observation[]): Observation[] {
  const latest = new Map<string, Observation>();
  for (const o of delivered) latest.set(o.kind === 'app' ? o.name : 'appset', o);
  return [...latest.values()];
}

function shuffled(order: [number, boolean][]): Observation[] {
  const placed = timeline.flatMap((o, i) => {
    const [key, twice] = order[i] as [number, boolean];
    return twice ? [{ o, key }, { o, key: (key + 0.37) % 1 }] : [{ o, key }];
  });
  return placed.sort((a, b) => a.key - b.key).map((p) => p.o);
}

describe('ApplicationSet children at their own revisions, whatever the delivery', () => {
  it('in order: one thread, each row at its child\'s revision, Complete, and no Degraded reply for the child Degraded at the previous revision', () => {
    const h = new Harness(config);
    timeline.forEach((o, i) => h.apply(factOf(o, T0 + i * 1000)));
    const r = h.record(RELEASE, APPSET_PIPELINE)!;
    expect([...h.records.keys()]).toEqual([`${APPSET_PIPELINE}/${RELEASE}`]);
    expect(r.status).toBe('Complete');
    expect(r.stages.map((s) => stepRow(s)?.head.join(' · '))).toEqual([
      'step 1 of 3 · 1/1 Healthy at `a1a1a1a`',
      'step 2 of 3 · 2/2 Healthy · `checkout-eu-1` at `b2b2b2b`; `checkout-eu-2` at `c3c3c3c`',
      'step 3 of 3 · 1/1 Healthy at `d4d4d4d`',
    ]);
    expect(h.replies('degraded')).toEqual([]);
    expect(h.replies('appset-out-of-order')).toEqual([]);
  });

  it('shuffled and repeated, then a resync: never Failed, no Degraded or out-of-order reply, every reply once, Complete at the end', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), { minLength: timeline.length, maxLength: timeline.length }), (order) => {
        const h = new Harness(config);
        const delivered = shuffled(order);
        [...delivered, ...resync(timeline)].forEach((o, i) => {
          h.apply(factOf(o, T0 + i * 1000));
          const r = h.record(RELEASE, APPSET_PIPELINE);
          expect(r?.status).not.toBe('Failed');
          // The Degraded child's row never reads Degraded: its step had not reached it, and at its own revision it was never Degraded.
          expect(r?.stages.find((s) => s.name === 'prod-us')?.status).not.toBe('Degraded');
        });
        expect([...h.records.keys()]).toEqual([`${APPSET_PIPELINE}/${RELEASE}`]);
        expect(h.replies('degraded')).toEqual([]);
        expect(h.replies('appset-out-of-order')).toEqual([]);
        const ids = h.replies().map((e) => e.effect.id);
        expect(new Set(ids).size).toBe(ids.length);
        const r = h.record(RELEASE, APPSET_PIPELINE)!;
        expect(r.status).toBe('Complete');
        expect(r.stages.map((s) => s.stepProgress?.revision ?? s.stepProgress?.revisions?.map((o) => o.revisions[0]))).toEqual([OWN['checkout-staging'], [OWN['checkout-eu-1'], OWN['checkout-eu-2']], OWN['checkout-us']]);
      }),
      { numRuns: 120 },
    );
  }, 120_000);
});
