/**
 * An ApplicationSet state built after the one before it (appSetStateOf's `previous`) reuses the
 * entries that did not change, and its member index lends the lists of the index before
 * (derive-appset.ts). Whatever the status writes do (entries moved, re-stepped, added, removed,
 * renamed), the state and its index equal what is built from the fact alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appSetStateOf } from '../../src/releases/reduce/appset-known.js';
import { memberIndex } from '../../src/releases/reduce/derive-appset.js';
import type { ApplicationSetFact } from '../../src/facts/fact.js';
import { factOf, type MemberState } from '../helpers/appset-world.js';

const NAMES = Array.from({ length: 12 }, (_, i) => `checkout-${i}`);
const STATUSES = ['Waiting', 'Pending', 'Progressing', 'Healthy'] as const;
const REVISIONS = ['c0ffee1234567890abcdef1234567890abcdef12', 'beef0001234567890abcdef1234567890abcdef1'];

const entry = fc.record({
  status: fc.constantFrom(...STATUSES),
  step: fc.integer({ min: 1, max: 3 }),
  targetRevisions: fc.subarray(REVISIONS),
  lastTransitionTime: fc.constantFrom('2026-08-20T09:00:00Z', '2026-08-20T09:01:00Z', '2026-08-20T09:02:00Z'),
});
/** One status write: the entries it lists, by name (a subset of the names, in a shuffled order). */
const write = fc.shuffledSubarray(NAMES, { minLength: 1 }).chain((names) => fc.tuple(...names.map((n) => entry.map((e) => [n, e] as const))));

function factOfWrite(entries: readonly (readonly [string, MemberState & { step: number }])[], rv: number): ApplicationSetFact {
  return factOf({ kind: 'appset', rv, members: Object.fromEntries(entries) }, 1_000 + rv) as ApplicationSetFact;
}

/** The index as plain data (its lists by content). */
function plain(index: ReturnType<typeof memberIndex>): unknown {
  return { all: index.all, byStep: [...index.byStep].sort(([a], [b]) => a.localeCompare(b)), targeted: [...index.targeted].sort(), latestTransition: index.latestTransition };
}

describe('the member index of an ApplicationSet state built after the one before', () => {
  it('equals the index built from the fact alone, write after write, and reuses what did not change', () => {
    fc.assert(
      fc.property(fc.array(write, { minLength: 1, maxLength: 8 }), (writes) => {
        let previous: ReturnType<typeof appSetStateOf> | undefined;
        writes.forEach((entries, i) => {
          const carried = appSetStateOf(factOfWrite(entries, 10 + i), previous);
          const alone = appSetStateOf(factOfWrite(entries, 10 + i));
          expect(carried).toEqual(alone);
          expect(plain(memberIndex(carried))).toEqual(plain(memberIndex(alone)));
          if (previous) for (const [name, member] of Object.entries(carried.members)) {
            const before = previous.members[name];
            if (before && JSON.stringify(before) === JSON.stringify(member)) expect(member).toBe(before);
          }
          previous = carried;
        });
      }),
      { numRuns: 300 },
    );
  });
});
