/**
 * Step membership is a property of the ApplicationSet, not of a release: the worker keeps the
 * latest state of each ApplicationSet beside the records (AppSetMemberships; the reduce harness
 * mirrors it), so a release opened after the ApplicationSet was heard shows each child only in its
 * step's row from its first fact, and a child's fact is routed to that row alone. A release whose
 * children moved on counts them as they last were there: never "Complete" over rows that read
 * "0/1 Healthy". Through the worker's own routing and batch step (test/helpers/reduce-harness.ts);
 * the Redis side of the index against the real Redis.
 */
import { redisClient } from '../helpers/slack-harness.js';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplicationSetFact } from '../../src/facts/fact.js';
import { AppSetMemberships } from '../../src/releases/store/appset-memberships.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { revisionReleaseId } from '../../src/routing/route.js';
import { createKeys } from '../../src/store/keys.js';
import { stepRow } from '../../src/slack/render/step-row.js';
import { APPSET_PIPELINE, APPSET_STAGES, APPSET_STEPS, appSetPipelineConfig, factOf, rollingSyncTimeline, type Observation, targetsOf } from '../helpers/appset-world.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { Harness } from '../helpers/reduce-harness.js';

const PIPELINE = APPSET_PIPELINE;
const REV1 = 'c0ffee1234567890abcdef1234567890abcdef12';
const REV2 = 'beef00d234567890abcdef1234567890abcdef12';
const STEPS = APPSET_STEPS;
const STAGES = APPSET_STAGES;
const config = appSetPipelineConfig();
const T0 = Date.parse('2026-08-20T10:00:00Z');
const R1 = revisionReleaseId(REV1);
const R2 = revisionReleaseId(REV2);
const GRACE = config.settings.unhealthyGraceMinutes * 60_000;

const stepOf = (child: string) => STEPS.findIndex((names) => names.includes(child));
const childKey = (child: string) => `prod/argocd/app:${child}`;

/** Each child heard in this record is in the row of its step only. */
function eachChildInItsRow(r: ReleaseRecord): void {
  for (const child of STEPS.flat()) {
    const rows = STAGES.filter((stage) => targetsOf(r, stage).includes(childKey(child)));
    if (rows.length > 0) expect(rows).toEqual([STAGES[stepOf(child)]]);
  }
}

/** A row never says Healthy over members not done, and a Complete release has every member of every step done. */
function noContradiction(r: ReleaseRecord | undefined): void {
  for (const s of r?.stages ?? []) {
    const p = s.stepProgress;
    if (s.status === 'Healthy') expect(p?.known && p.done === p.members).toBe(true);
    if (r?.status === 'Complete') expect(p?.known && p.done === p.members && p.members > 0).toBe(true);
  }
}

function deliver(h: Harness, observations: readonly Observation[], from: number, each?: (o: Observation) => void): number {
  observations.forEach((o, i) => {
    h.apply(factOf(o, from + i * 1000));
    each?.(o);
  });
  return from + observations.length * 1000;
}

/** The ApplicationSet as it stands once REV1 rolled out everywhere: each child Healthy there. */
const settled = (revision: string, rv: number): Observation => ({
  kind: 'appset',
  rv,
  members: Object.fromEntries(STEPS.flatMap((names, i) => names.map((n) => [n, { status: 'Healthy' as const, step: i + 1, targetRevisions: [revision], lastTransitionTime: '2026-08-20T09:00:00Z' }]))),
});
const healthyChild = (name: string, rv: number, revision: string): Observation => ({ kind: 'app', name, rv, state: { sync: 'Synced', health: 'Healthy', revision, reconciledAt: '2026-08-20T09:00:00Z' } });

describe('step membership known beside the records', () => {
  it('start-up: the ApplicationSet heard before any child opens nothing, and the release its children open knows every step from the first fact and is Complete', () => {
    const h = new Harness(config);
    expect(h.apply(factOf(settled(REV1, 200), T0))).toEqual(['ignored']);
    expect(h.records.size).toBe(0);
    STEPS.flat().forEach((child, i) => {
      // Routed to the row of its step alone.
      expect(h.apply(factOf(healthyChild(child, 300 + i, REV1), T0 + (i + 1) * 1000))).toEqual(['applied']);
      const r = h.record(R1, PIPELINE)!;
      expect(r.stages.every((s) => s.stepProgress?.known === true)).toBe(true);
      expect(r.stages.map((s) => stepRow(s)?.head.join(' · ')).join('\n')).not.toContain('not known');
      eachChildInItsRow(r);
      noContradiction(r);
    });
    const r = h.record(R1, PIPELINE)!;
    expect(r.status).toBe('Complete');
    expect(r.stages.map((s) => stepRow(s)?.head.join(' · '))).toEqual(['step 1 of 3 · 1/1 Healthy at `c0ffee1`', 'step 2 of 3 · 2/2 Healthy at `c0ffee1`', 'step 3 of 3 · 1/1 Healthy at `c0ffee1`']);
    expect(h.replies('release-complete')).toHaveLength(1);
  });

  it('a new release opened after the ApplicationSet was heard: each child in its step row alone from its first fact; the release it supersedes stays Complete, its children counted as they left it', () => {
    const h = new Harness(config);
    const at = deliver(h, rollingSyncTimeline(STEPS, REV1), T0);
    expect(h.record(R1, PIPELINE)?.status).toBe('Complete');
    const next = rollingSyncTimeline(STEPS, REV2, { from: REV1, rv: 1000, at: '2026-08-20T09:30:00Z' });
    const heads = new Set<string>();
    deliver(h, next, at, () => {
      const r2 = h.record(R2, PIPELINE);
      if (r2) {
        expect(r2.stages.every((s) => s.stepProgress?.known === true)).toBe(true);
        eachChildInItsRow(r2);
        noContradiction(r2);
        expect(r2.status).not.toBe('Failed');
      }
      expect(h.record(R1, PIPELINE)?.status).toBe('Complete');
      noContradiction(h.record(R1, PIPELINE));
      heads.add(stepRow(h.record(R1, PIPELINE)!.stages[1]!)!.head.join(' · '));
    });
    // While one step-2 child had moved on and the other not yet, the row said so.
    expect([...heads]).toContain('step 2 of 3 · 2/2 Healthy at `c0ffee1` · 1 moved on');
    expect(h.record(R2, PIPELINE)?.status).toBe('Complete');
    const r1 = h.record(R1, PIPELINE)!;
    expect(r1.stages.map((s) => s.status)).toEqual(['Healthy', 'Healthy', 'Healthy']);
    expect(r1.stages.map((s) => s.stepProgress)).toEqual([
      { step: 1, stepCount: 3, known: true, members: 1, done: 1, movedOn: 1, revision: REV1 },
      { step: 2, stepCount: 3, known: true, members: 2, done: 2, movedOn: 2, revision: REV1 },
      { step: 3, stepCount: 3, known: true, members: 1, done: 1, movedOn: 1, revision: REV1 },
    ]);
    expect(h.replies('appset-out-of-order')).toEqual([]);
  });

  it.each(STEPS.flat())('the sandbox\'s start-up: children open the release before the ApplicationSet is heard, %s moves on first, then it is heard: rows read "1/1 Healthy … moved on", never "0/1" under Complete', (mover) => {
    const h = new Harness(config);
    STEPS.flat().forEach((child, i) => h.apply(factOf(healthyChild(child, 300 + i, REV1), T0 + i * 1000)));
    // Before the ApplicationSet is heard, each child is in every step row (a guess).
    const opened = h.record(R1, PIPELINE)!;
    expect(opened.stages.every((s) => s.stepProgress?.known === false && Object.keys(s.targets).length === 4)).toBe(true);
    const next = rollingSyncTimeline(STEPS, REV2, { from: REV1, rv: 1000, at: '2026-08-20T09:30:00Z' });
    // One child moves on, then the ApplicationSet (now targeting REV2) is heard, then the others move on.
    const firstMove = next.findIndex((o) => o.kind === 'app' && o.name === mover);
    const appSet = next.findIndex((o) => o.kind === 'appset');
    const order = [next[firstMove]!, next[appSet]!, ...next.filter((_, i) => i !== firstMove && i !== appSet)];
    deliver(h, order, T0 + 10_000, (o) => {
      noContradiction(h.record(R1, PIPELINE));
      if (o === next[appSet]) {
        // The ApplicationSet reached the old release: the child that moved on counts as it left, in its own row alone.
        const r1 = h.record(R1, PIPELINE)!;
        eachChildInItsRow(r1);
        const row = r1.stages[stepOf(mover)]!;
        expect(row.targets[childKey(mover)]?.supersededBy).toBe(R2);
        expect(row.stepProgress).toMatchObject({ known: true, done: 1, movedOn: 1 });
      }
    });
    const r1 = h.record(R1, PIPELINE)!;
    expect(r1.status).toBe('Complete');
    expect(r1.stages.map((s) => stepRow(s)?.head.join(' · '))).toEqual(['step 1 of 3 · 1/1 Healthy at `c0ffee1`', 'step 2 of 3 · 2/2 Healthy at `c0ffee1`', 'step 3 of 3 · 1/1 Healthy at `c0ffee1`']);
    expect(h.replies('stall')).toEqual([]);
    expect(h.record(R2, PIPELINE)?.status).toBe('Complete');
  });

  it('a child that moved on before it was Healthy here leaves its row not Healthy, and the release Superseded, not Complete', () => {
    const h = new Harness(config);
    const first = rollingSyncTimeline(STEPS, REV1);
    // REV1 stops as step 2 syncs: the step-2 children are Synced/Progressing when REV2 comes.
    const cut = first.findIndex((o) => o.kind === 'appset' && o.members['checkout-eu-1']?.status === 'Progressing');
    const at = deliver(h, first.slice(0, cut + 1), T0);
    deliver(h, rollingSyncTimeline(STEPS, REV2, { from: REV1, rv: 1000, at: '2026-08-20T09:30:00Z' }), at, () => noContradiction(h.record(R1, PIPELINE)));
    const r1 = h.record(R1, PIPELINE)!;
    expect(r1.status).toBe('Superseded');
    expect(r1.stages.map((s) => s.status)).toEqual(['Healthy', 'Progressing', 'Progressing']);
    expect(r1.stages[1]?.stepProgress).toMatchObject({ members: 2, done: 0, movedOn: 2 });
    expect(h.record(R2, PIPELINE)?.status).toBe('Complete');
  });

  it('the stale-cache fault in the second rollout is still a failure of that release alone', () => {
    const h = new Harness(config);
    const at = deliver(h, rollingSyncTimeline(STEPS, REV1), T0);
    deliver(h, rollingSyncTimeline(STEPS, REV2, { from: REV1, rv: 1000, at: '2026-08-20T09:30:00Z', staleCache: 'checkout-eu-1' }), at, () => {
      expect(h.record(R2, PIPELINE)?.status).not.toBe('Complete');
      expect(h.record(R1, PIPELINE)?.status).toBe('Complete');
    });
    expect(h.record(R2, PIPELINE)?.status).toBe('Failed');
    const replies = h.replies('appset-out-of-order');
    expect(replies.map((r) => r.releaseId)).toEqual([R2]);
    expect(replies[0]?.effect.detail.outOfOrder).toMatchObject({ startedStep: 3, behindSteps: [2], revision: REV2, behind: [{ application: 'checkout-eu-1' }] });
  });

  it('two rollouts in any order, with repeats, then a resync: no row is Healthy over members not done, nothing is Complete over an unfinished step, and the newer release ends Complete', () => {
    const first = rollingSyncTimeline(STEPS, REV1);
    const second = rollingSyncTimeline(STEPS, REV2, { from: REV1, rv: 1000, at: '2026-08-20T09:30:00Z' });
    const all = [...first, ...second];
    const latest = new Map<string, Observation>();
    for (const o of all) latest.set(o.kind === 'app' ? o.name : 'appset', o);
    expect((2 * all.length + latest.size + 1) * 1000).toBeLessThan(GRACE);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), { minLength: all.length, maxLength: all.length }), (keys) => {
        const placed = all.flatMap((o, i) => {
          const [key, twice] = keys[i] as [number, boolean];
          return twice ? [{ o, key }, { o, key: (key + 0.37) % 1 }] : [{ o, key }];
        });
        const h = new Harness(config);
        deliver(h, [...placed.sort((a, b) => a.key - b.key).map((p) => p.o), ...latest.values()], T0, () => {
          for (const r of h.records.values()) noContradiction(r);
          expect(h.replies('appset-out-of-order')).toEqual([]);
        });
        expect(h.record(R2, PIPELINE)?.status).toBe('Complete');
      }),
      { numRuns: 150 },
    );
  });
});

describe('the membership index in Redis', () => {
  const prefix = uniquePrefix();
  let redis: Redis;
  beforeAll(() => {
    redis = redisClient();
  });
  afterAll(async () => {
    redis.disconnect();
    await dropPrefix(prefix);
  });

  const fact = (o: Observation, at: number, uid?: string): ApplicationSetFact => {
    const f = factOf(o, at) as ApplicationSetFact;
    return uid ? { ...f, appSet: { ...f.appSet, uid } } : f;
  };

  it('keeps the newest state of each ApplicationSet whatever the order it is noted in, with a TTL, and a re-created ApplicationSet replaces the old one', async () => {
    const keys = createKeys(prefix);
    const memberships = new AppSetMemberships(redis, keys, 3_600_000);
    const pipeline = config.pipelines.find((p) => p.name === PIPELINE)!;
    expect(await memberships.of(pipeline)).toEqual({});
    await memberships.note(config, fact(settled(REV2, 205), T0));
    // Older, and noted by two workers at once: neither replaces the newer state.
    await Promise.all([memberships.note(config, fact(settled(REV1, 204), T0 + 1000)), memberships.note(config, fact(settled(REV1, 203), T0 + 2000))]);
    const known = await memberships.of(pipeline);
    expect(Object.keys(known!)).toEqual(['prod/argocd/appset:checkout']);
    expect(known!['prod/argocd/appset:checkout']).toMatchObject({ resourceVersion: '205', members: { 'checkout-us': { step: '3', targetRevisions: [REV2] } } });
    // Read again unchanged: the same object (parsed once).
    expect((await memberships.of(pipeline))!['prod/argocd/appset:checkout']).toBe(known!['prod/argocd/appset:checkout']);
    const ttl = await redis.pttl(keys.appSetMembership(PIPELINE, 'prod/argocd/appset:checkout'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    // Deleted and created again under the same name: another uid, heard later, counts though its resourceVersion is lower.
    await memberships.note(config, fact(settled(REV1, 100), T0 + 3000, 'uid-appset-2'));
    expect((await memberships.of(pipeline))!['prod/argocd/appset:checkout']).toMatchObject({ uid: 'uid-appset-2', resourceVersion: '100' });
  });

  it('a read started after a write began (the worker runs jobs side by side) sees that write: a child queued after its ApplicationSet is placed by it', async () => {
    const keys = createKeys(`${prefix}-side-by-side`);
    const memberships = new AppSetMemberships(redis, keys, 3_600_000);
    const pipeline = config.pipelines.find((p) => p.name === PIPELINE)!;
    const noting = memberships.note(config, fact(settled(REV1, 301), T0));
    expect((await memberships.of(pipeline))!['prod/argocd/appset:checkout']).toMatchObject({ resourceVersion: '301' });
    await noting;
  });
});
