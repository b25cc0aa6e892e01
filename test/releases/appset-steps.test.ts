/**
 * ApplicationSet step stages in the reducer, through the worker's own routing and batch step
 * (test/helpers/reduce-harness.ts): step membership from the ApplicationSet's status, the
 * release's revision as what "done" is judged at, and the out-of-order step (the stale-cache
 * fault) as a failure. Scenarios first, then properties over any order and duplication.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReleaseRecord } from '../../src/releases/record.js';
import { revisionReleaseId } from '../../src/releases/route.js';
import { factOf, latestView, rollingSyncTimeline, type Observation } from '../helpers/appset-world.js';
import { testConfig } from '../helpers/pipeline.js';
import { Harness } from '../helpers/reduce-harness.js';

const PIPELINE = 'checkout-appset';
const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const STEPS = [['checkout-staging'], ['checkout-eu-1', 'checkout-eu-2'], ['checkout-us']];
const STAGES = ['staging', 'prod-eu', 'prod-us'];

const config = testConfig(`
  - name: ${PIPELINE}
    channel: C0123APPSET
    stages:
${STAGES.map((name, i) => `      - { name: ${name}, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: ${i + 1} } }`).join('\n')}
`);

const T0 = Date.parse('2026-08-20T10:00:00Z');
const releaseId = revisionReleaseId(REV);

function deliver(h: Harness, observations: readonly Observation[], each?: (record: ReleaseRecord | undefined, delivered: Observation[]) => void): void {
  const delivered: Observation[] = [];
  observations.forEach((o, i) => {
    h.apply(factOf(o, T0 + i * 1000));
    delivered.push(o);
    each?.(h.record(releaseId, PIPELINE), delivered);
  });
}

/** Every member of every step is Healthy at REV in the ApplicationSet and its Application is Healthy and Synced at REV. */
function everyStepHealthyAt(delivered: readonly Observation[]): boolean {
  const view = latestView(delivered);
  if (!view.appSet) return false;
  return STEPS.flat().every((n) => {
    const m = view.appSet?.[n];
    const a = view.apps.get(n);
    return m?.status === 'Healthy' && m.targetRevisions.includes(REV) && a?.sync === 'Synced' && a.health === 'Healthy' && a.revision === REV;
  });
}

const rows = (r: ReleaseRecord | undefined) => r?.stages.map((s) => `${s.name}:${s.status}`).join(' ');
const targetsOf = (r: ReleaseRecord | undefined, stage: string) => Object.keys(r?.stages.find((s) => s.name === stage)?.targets ?? {}).sort();

describe('ApplicationSet step stages', () => {
  it('each step stage holds the children of its step only, and goes Healthy in order; Complete only at the end', () => {
    const h = new Harness(config);
    const seen: string[] = [];
    deliver(h, rollingSyncTimeline(STEPS, REV), (r, delivered) => {
      if (r?.status === 'Complete') expect(everyStepHealthyAt(delivered)).toBe(true);
      const now = rows(r);
      if (now && seen.at(-1) !== now) seen.push(now);
    });
    const r = h.record(releaseId, PIPELINE)!;
    expect(r.status).toBe('Complete');
    expect(r.revision).toBe(REV);
    expect(targetsOf(r, 'staging')).toEqual(['prod/argocd/app:checkout-staging']);
    expect(targetsOf(r, 'prod-eu')).toEqual(['prod/argocd/app:checkout-eu-1', 'prod/argocd/app:checkout-eu-2']);
    expect(targetsOf(r, 'prod-us')).toEqual(['prod/argocd/app:checkout-us']);
    expect(r.stages.map((s) => s.stepProgress)).toEqual([
      { step: 1, stepCount: 3, known: true, members: 1, done: 1, revision: REV },
      { step: 2, stepCount: 3, known: true, members: 2, done: 2, revision: REV },
      { step: 3, stepCount: 3, known: true, members: 1, done: 1, revision: REV },
    ]);
    // The rows went Healthy in step order, each only after the one before.
    const healthyAt = r.stages.map((s) => s.healthyAt!);
    expect([...healthyAt].sort((a, b) => a - b)).toEqual(healthyAt);
    expect(seen.filter((s) => s.includes('prod-us:Healthy')).every((s) => s.includes('staging:Healthy') && s.includes('prod-eu:Healthy'))).toBe(true);
    expect(h.replies('appset-out-of-order')).toEqual([]);
    expect(h.replies('release-complete')).toHaveLength(1);
  });

  it('before the ApplicationSet is heard, children Healthy at the revision make no stage Healthy', () => {
    const h = new Harness(config);
    const timeline = rollingSyncTimeline(STEPS, REV).filter((o) => o.kind === 'app');
    deliver(h, timeline);
    const r = h.record(releaseId, PIPELINE)!;
    expect(r.stages.map((s) => s.status)).toEqual(['Progressing', 'Progressing', 'Progressing']);
    expect(r.stages.every((s) => s.healthyAt === undefined && s.stepProgress?.known === false)).toBe(true);
    expect(r.status).toBe('InProgress');
  });

  it('the stale-cache fault: step 3 ran while a step-2 child was never synced; a failure reply names both, and the release is not Complete', () => {
    const h = new Harness(config);
    deliver(h, rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1' }), (r) => expect(r?.status).not.toBe('Complete'));
    const r = h.record(releaseId, PIPELINE)!;
    expect(r.status).toBe('Failed');
    expect(rows(r)).toBe('staging:Healthy prod-eu:Progressing prod-us:Degraded');
    expect(r.stages[2]?.stepProgress?.outOfOrder).toBe('step 3 started before step 2 was Healthy at c0ffee1');
    const replies = h.replies('appset-out-of-order');
    expect(replies).toHaveLength(1);
    const reply = replies[0]!.effect;
    expect(reply).toMatchObject({ stage: 'prod-us', needsPerson: true, target: { kind: 'ApplicationSet', name: 'checkout' } });
    expect(reply.detail.outOfOrder).toMatchObject({
      appSet: 'prod/argocd/checkout',
      startedStep: 3,
      behindSteps: [2],
      revision: REV,
      behind: [{ application: 'checkout-eu-1', step: '2', status: 'Healthy', targets: [REV], observed: 'OutOfSync/Progressing at c0ffee1' }],
      started: [{ application: 'checkout-us', step: '3' }],
    });
  });

  it('a commit that changes only the first step leaves later steps Synced at once: Healthy without a sync is no out-of-order start', () => {
    const h = new Harness(config);
    const obs: Observation[] = [];
    let rv = 500;
    for (const n of STEPS.flat()) obs.push({ kind: 'app', name: n, rv: ++rv, state: { sync: n === 'checkout-staging' ? 'OutOfSync' : 'Synced', health: 'Healthy', revision: REV } });
    const members = (staging: 'Waiting' | 'Pending' | 'Healthy') =>
      Object.fromEntries(STEPS.flatMap((names, i) => names.map((n) => [n, { status: n === 'checkout-staging' ? staging : 'Healthy', step: i + 1, targetRevisions: [REV] }])));
    obs.push({ kind: 'appset', rv: ++rv, members: members('Waiting') });
    obs.push({ kind: 'appset', rv: rv + 1, members: members('Pending') });
    deliver(h, obs);
    const r = h.record(releaseId, PIPELINE)!;
    expect(h.replies('appset-out-of-order')).toEqual([]);
    expect(r.status).toBe('InProgress');
    expect(rows(r)).toBe('staging:Progressing prod-eu:Healthy prod-us:Healthy');
  });

  it('an ApplicationSet heard before any child opens no release', () => {
    const h = new Harness(config);
    const appSetFirst = rollingSyncTimeline(STEPS, REV).find((o) => o.kind === 'appset')!;
    expect(h.apply(factOf(appSetFirst, T0))).toEqual(['ignored']);
    expect(h.records.size).toBe(0);
  });
});

/** Any order, any duplication: each observation delivered once or twice at a random place, then a resync of the latest of each. */
const deliveries = (n: number) => fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), { minLength: n, maxLength: n });

function shuffled(timeline: Observation[], order: [number, boolean][]): Observation[] {
  const placed = timeline.flatMap((o, i) => {
    const [key, twice] = order[i] as [number, boolean];
    return twice ? [{ o, key }, { o, key: (key + 0.37) % 1 }] : [{ o, key }];
  });
  return placed.sort((a, b) => a.key - b.key).map((p) => p.o);
}

function resync(timeline: readonly Observation[]): Observation[] {
  const latest = new Map<string, Observation>();
  for (const o of timeline) latest.set(o.kind === 'app' ? o.name : 'appset', o);
  return [...latest.values()];
}

describe('ApplicationSet step stages, whatever the delivery', () => {
  const clean = rollingSyncTimeline(STEPS, REV);
  const faulty = rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1' });

  it('the release is Complete only while every step is Healthy at the revision; after a resync, a clean rollout is Complete', () => {
    fc.assert(
      fc.property(deliveries(clean.length), (order) => {
        const h = new Harness(config);
        deliver(h, [...shuffled(clean, order), ...resync(clean)], (r, delivered) => {
          if (r?.status === 'Complete') expect(everyStepHealthyAt(delivered)).toBe(true);
        });
        expect(h.record(releaseId, PIPELINE)?.status).toBe('Complete');
      }),
      { numRuns: 150 },
    );
  });

  it('with the stale-cache fault the release is never Complete, and ends Failed with the out-of-order step said', () => {
    fc.assert(
      fc.property(deliveries(faulty.length), (order) => {
        const h = new Harness(config);
        deliver(h, [...shuffled(faulty, order), ...resync(faulty)], (r) => expect(r?.status).not.toBe('Complete'));
        const r = h.record(releaseId, PIPELINE)!;
        expect(r.status).toBe('Failed');
        expect(r.stages[1]?.healthyAt).toBeUndefined();
        expect(h.replies('appset-out-of-order').length).toBeGreaterThan(0);
      }),
      { numRuns: 150 },
    );
  });
});
