/**
 * The derivation and the save look only at what a fact wrote when they are handed the record they
 * saw last (the store's cache hands the worker that record, updated in place): a step stage's key
 * order and write log are kept beside its targets (src/releases/record/target-writes.ts). Handed a copy
 * per fact instead, everything is listed and compared from scratch. For ApplicationSet children
 * and their ApplicationSet in any order, with repeats, both end in the same records, replies and
 * outcomes, and the saves of the incremental path write what a from-scratch encoding holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/releases/store/record-codec.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { encodeChanges, type Encoded } from '../../src/releases/store/record-save.js';
import { APPSET_PIPELINE, appSetPipelineConfig, factOf, rollingSyncTimeline } from '../helpers/appset-world.js';
import { Harness } from '../helpers/reduce-harness.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const STEPS = [['checkout-staging'], ['checkout-eu-1', 'checkout-eu-2', 'checkout-eu-3'], ['checkout-us-1', 'checkout-us-2']];
const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const NEXT = 'beef0001234567890abcdef1234567890abcdef1';
const timeline = [...rollingSyncTimeline(STEPS, REV), ...rollingSyncTimeline(STEPS, NEXT, { from: REV, rv: 1000, at: '2026-08-20T10:00:00Z' })];

/** The worker's way: the record saved last, handed back as it is; each save encoded from what changed, its fields kept as Redis would hold them. */
function inPlace(h: Harness): Map<string, Map<string, string>> {
  const last = new Map<string, ReleaseRecord>();
  const encoded = new Map<string, Encoded>();
  const held = new Map<string, Map<string, string>>();
  h.store = {
    load: (key) => last.get(key),
    save: (key, record) => {
      last.set(key, record);
      const changes = encodeChanges(record, encoded.get(key));
      encoded.set(key, changes.after);
      const fields = held.get(key) ?? new Map<string, string>();
      for (const [f, v] of changes.set) fields.set(f, v);
      for (const f of changes.del) fields.delete(f);
      held.set(key, fields);
    },
  };
  return held;
}

describe('incremental derivation and save of ApplicationSet steps', () => {
  it('children and ApplicationSet facts shuffled, with repeats: the record kept in place ends as one copied per fact, and its saves hold a from-scratch encoding', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(timeline.map((_, i) => i), { minLength: timeline.length }), fc.array(fc.integer({ min: 0, max: timeline.length - 1 }), { maxLength: 30 }), (order, repeats) => {
        const facts = [...order, ...repeats].map((i, k) => factOf(timeline[i]!, T0 + k * 1000));
        const copied = new Harness(appSetPipelineConfig());
        const kept = new Harness(appSetPipelineConfig());
        const held = inPlace(kept);
        for (const fact of facts) {
          copied.apply(fact);
          kept.apply(fact);
        }
        expect([...kept.records.keys()]).toEqual([...copied.records.keys()]);
        for (const [key, record] of copied.records) expect(structuredClone(kept.records.get(key))).toEqual(structuredClone(record));
        expect(kept.effects).toEqual(copied.effects);
        expect(kept.outcomes).toEqual(copied.outcomes);
        for (const [key, record] of kept.records) expect(held.get(key)).toEqual(encodeRecord(structuredClone(record)));
        expect(kept.records.size).toBeGreaterThan(0);
        expect([...kept.records.values()].every((r) => r.pipeline === APPSET_PIPELINE)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
