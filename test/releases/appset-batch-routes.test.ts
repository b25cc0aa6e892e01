/**
 * A child's fact heard before its ApplicationSet goes to every step stage, and the worker reduces
 * those routes in one batch (one read and one save of the record). In that batch a step stage the
 * route did not change is not judged again (src/releases/stage-memo.ts): the record and the replies
 * must be those of each route reduced on its own, from a copy of the record (no judgement kept).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../src/facts/fact.js';
import type { Effect, ReleaseRecord } from '../../src/releases/record.js';
import { reduceReleaseBatch } from '../../src/releases/reducer-worker.js';
import { resolveRoutes } from '../../src/releases/resolve-routes.js';
import { revisionReleaseId } from '../../src/releases/route.js';
import { APPSET_STEPS, appSetPipelineConfig, factOf, rollingSyncTimeline, type Observation } from '../helpers/appset-world.js';

const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const T0 = Date.parse('2026-08-20T10:00:00Z');
const config = appSetPipelineConfig();
const releaseId = revisionReleaseId(REV);

type Reply = Extract<Effect, { type: 'thread.reply' }>;

/** Reduces every fact's routes to the release, in one batch per fact (`together`) or one batch per route: the record and the replies after each fact. */
function reduceAll(observations: readonly Observation[], together: boolean): { record: ReleaseRecord | undefined; replies: Reply[] }[] {
  let record: ReleaseRecord | undefined;
  const trail: { record: ReleaseRecord | undefined; replies: Reply[] }[] = [];
  observations.forEach((o, i) => {
    const replies: Reply[] = [];
    const fact: Fact = factOf(o, T0 + i * 1000);
    const items = resolveRoutes(config, fact)
      .filter((route) => route.releaseId === releaseId)
      .map((route) => ({ fact, route }));
    for (const batch of together ? [items] : items.map((item) => [item])) {
      if (batch.length === 0) continue;
      const step = reduceReleaseBatch(record ? structuredClone(record) : undefined, batch, { config, knownTargets: {}, previousOfTarget: new Map() });
      if (step.record) record = step.record;
      for (const e of step.effects) if (e.type === 'thread.reply') replies.push(e);
    }
    trail.push({ record: record ? structuredClone(record) : undefined, replies });
  });
  return trail;
}

function shuffled(timeline: readonly Observation[], keys: number[]): Observation[] {
  return timeline
    .map((o, i) => ({ o, key: keys[i] as number }))
    .sort((a, b) => a.key - b.key)
    .map((p) => p.o);
}

describe('a child routed to every step stage, reduced in one batch', () => {
  const clean = rollingSyncTimeline(APPSET_STEPS, REV);
  // A child that fails at the revision, heard anywhere (before the ApplicationSet, each step stage holds it): the rows say so.
  const failed: Observation = { kind: 'app', name: 'checkout-eu-1', rv: 10_000, state: { sync: 'Synced', health: 'Degraded', revision: REV } };
  const timelines = { clean, faulty: rollingSyncTimeline(APPSET_STEPS, REV, { staleCache: 'checkout-eu-1' }), 'failing child': [...clean, failed] };

  for (const [name, timeline] of Object.entries(timelines)) {
    it(`${name} rollout, any order: the same record and replies as one batch per route`, () => {
      let batched = 0;
      fc.assert(
        fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: timeline.length, maxLength: timeline.length }), (keys) => {
          const order = shuffled(timeline, keys);
          const together = reduceAll(order, true);
          const apart = reduceAll(order, false);
          expect(together).toEqual(apart);
          if (together.at(-1)?.record?.stages.some((s) => Object.keys(s.targets).length > 0)) batched += 1;
        }),
        { numRuns: 100 },
      );
      expect(batched).toBeGreaterThan(0);
    });
  }
});
