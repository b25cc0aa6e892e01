/**
 * ApplicationSet step stages in the reducer, through the worker's own routing and batch step
 * (test/helpers/reduce-harness.ts): step membership from the ApplicationSet's status, the
 * release's revision as what "done" is judged at, and the out-of-order step (the stale-cache
 * fault) as a failure, said only on evidence at least as new as the step's start: the race of the
 * ApplicationSet's and the Applications' streams is no failure. Scenarios first, then properties
 * over any order and duplication.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../src/facts/fact.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { reduceReleaseBatch } from '../../src/releases/worker/reducer-worker.js';
import { resolveRoutes } from '../../src/releases/worker/resolve-routes.js';
import { revisionReleaseId } from '../../src/routing/route.js';
import { stepRow } from '../../src/slack/render/step-row.js';
import { APPSET_PIPELINE, APPSET_STAGES, APPSET_STEPS, appSetPipelineConfig, factOf, latestView, rollingSyncTimeline, type Observation, targetsOf } from '../helpers/appset-world.js';
import { testConfig } from '../helpers/pipeline.js';
import { Harness } from '../helpers/reduce-harness.js';

const PIPELINE = APPSET_PIPELINE;
const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const STEPS = APPSET_STEPS;
const STAGES = APPSET_STAGES;

const config = appSetPipelineConfig();

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

const GRACE = config.settings.unhealthyGraceMinutes * 60_000;
const outOfOrder = (h: Harness) => h.replies('appset-out-of-order');
const stageOf = (r: ReleaseRecord | undefined, name: string) => r?.stages.find((st) => st.name === name);
const isApp = (o: Observation, name: string): o is Extract<Observation, { kind: 'app' }> => o.kind === 'app' && o.name === name;

/** The worker's batch step over `observations` delivered at once (each routed as the worker routes it). */
function batch(h: Harness, observations: readonly Observation[], at: number) {
  const facts: Fact[] = observations.map((o, i) => factOf(o, at + i * 1000));
  const items = facts.flatMap((fact) => resolveRoutes(config, fact).filter((route) => route.releaseId === releaseId).map((route) => ({ fact, route })));
  const current = h.record(releaseId, PIPELINE);
  return reduceReleaseBatch(current ? structuredClone(current) : undefined, items, { config, knownTargets: {}, previousOfTarget: new Map() });
}

describe('the ApplicationSet and its Applications on separate streams: out of order only on evidence as new as the start', () => {
  const clean = rollingSyncTimeline(STEPS, REV);
  // The ApplicationSet's status that starts step 2: step 1 Healthy there, the step-2 children Pending.
  const step2Start = clean.findIndex((o) => o.kind === 'appset' && o.members['checkout-eu-1']?.status === 'Pending');
  // The step-1 child's own facts from its sync on (Synced/Progressing, then Healthy), which the race delivers late.
  const stagingLate = clean.filter((o) => isApp(o, 'checkout-staging') && o.state.sync === 'Synced');
  const raced = [...clean.slice(0, step2Start + 1).filter((o) => !stagingLate.includes(o)), ...stagingLate, ...clean.slice(step2Start + 1)];

  it('the ApplicationSet that started step 2 is reduced before the step-1 child\'s own Healthy fact: the row waits for confirmation, no reply, never Failed', () => {
    const h = new Harness(config);
    let waited = false;
    deliver(h, raced, (r, delivered) => {
      expect(r?.status).not.toBe('Failed');
      expect(outOfOrder(h)).toEqual([]);
      if (delivered.length === step2Start + 1 - stagingLate.length) {
        // The ApplicationSet says step 2 started; the step-1 child was last heard OutOfSync, before that start.
        const row = stageOf(r, 'prod-eu')!;
        expect(row.status).toBe('Progressing');
        expect(row.stepProgress?.unconfirmed).toBe('step 2 started before step 1 was seen Healthy at c0ffee1');
        expect(stepRow(row)?.line).toBe(':hourglass_flowing_sand: waiting for confirmation: step 2 started before step 1 was seen Healthy at c0ffee1 (a delayed fact looks the same)');
        waited = true;
      }
      if (delivered.length === step2Start + 1) expect(stageOf(r, 'prod-eu')?.stepProgress?.unconfirmed).toBeUndefined();
    });
    expect(waited).toBe(true);
    expect(h.record(releaseId, PIPELINE)?.status).toBe('Complete');
  });

  it('the same race inside one batch of the worker: no reply, and the rows end in order', () => {
    const h = new Harness(config);
    const first = clean.indexOf(stagingLate[0]!);
    deliver(h, clean.slice(0, first));
    const step = batch(h, [...clean.slice(first, step2Start + 1).filter((o) => o.kind === 'appset'), ...stagingLate], T0 + 600_000);
    expect(step.effects.filter((e) => e.type === 'thread.reply' && e.kind === 'appset-out-of-order')).toEqual([]);
    expect(step.record?.status).toBe('InProgress');
    expect(rows(step.record)).toBe('staging:Healthy prod-eu:Progressing prod-us:Waiting');
  });

  it('the fault: the step-2 child heard after step 3 started (Argo CD\'s periodic refresh) and still OutOfSync: the reply, once', () => {
    const h = new Harness(config);
    const faulty = rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1' });
    const refresh = faulty.at(-1)!;
    expect(isApp(refresh, 'checkout-eu-1')).toBe(true);
    deliver(h, faulty.slice(0, -1), (r) => expect(r?.status).not.toBe('Failed'));
    expect(outOfOrder(h)).toEqual([]);
    expect(stageOf(h.record(releaseId, PIPELINE), 'prod-us')?.stepProgress?.unconfirmed).toBe('step 3 started before step 2 was seen Healthy at c0ffee1');
    // Through one batch of the worker, the refresh twice: one reply.
    const step = batch(h, [refresh, refresh], T0 + 600_000);
    const replies = step.effects.filter((e) => e.type === 'thread.reply' && e.kind === 'appset-out-of-order');
    expect(replies).toHaveLength(1);
    expect(step.record?.status).toBe('Failed');
    expect(rows(step.record)).toBe('staging:Healthy prod-eu:Progressing prod-us:Degraded');
    expect(stageOf(step.record, 'prod-us')?.stepProgress).toMatchObject({ outOfOrder: 'step 3 started before step 2 was Healthy at c0ffee1' });
  });

  it('no newer word from the child: the reply once the condition lasted the unhealthy grace, by fact time (a relist heartbeat, or else the stall watchdog)', () => {
    const faulty = rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1', periodicRefresh: false });
    const relist = (h: Harness, at: number) => resync(faulty).forEach((o, i) => h.apply(factOf(o, at + i, 'watch-resync')));
    const h = new Harness(config);
    deliver(h, faulty);
    const since = stageOf(h.record(releaseId, PIPELINE), 'staging')?.stepProgress?.orderSeenAt?.['3'];
    expect(since).toBeGreaterThan(T0);
    relist(h, since! + GRACE - 1000);
    expect(outOfOrder(h)).toEqual([]);
    expect(h.record(releaseId, PIPELINE)?.status).toBe('InProgress');
    relist(h, since! + GRACE);
    expect(outOfOrder(h)).toHaveLength(1);
    expect(outOfOrder(h)[0]?.effect.detail.outOfOrder?.behind.map((m) => m.application)).toEqual(['checkout-eu-1']);
    expect(h.record(releaseId, PIPELINE)?.status).toBe('Failed');
    relist(h, since! + 2 * GRACE);
    expect(outOfOrder(h)).toHaveLength(1);

    // Nothing at all follows the start: the stall watchdog's fact is the next fact, and judges it.
    const quiet = new Harness(config);
    deliver(quiet, faulty);
    const r = quiet.record(releaseId, PIPELINE)!;
    quiet.apply({ kind: 'watchdog', source: 'watchdog', receivedAt: r.lastHeardAt + config.settings.stallAfterMinutes * 60_000, pipeline: PIPELINE, releaseId, silentSince: r.lastHeardAt });
    expect(quiet.replies('stall')).toHaveLength(1);
    expect(outOfOrder(quiet)).toHaveLength(1);
  });

  it('a stage whose config stops naming an ApplicationSet loses its step row, and an ApplicationSet no stage names is forgotten', () => {
    const h = new Harness(config);
    deliver(h, rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1' }));
    expect(stageOf(h.record(releaseId, PIPELINE), 'prod-us')?.stepProgress).toBeDefined();
    const plain = testConfig(`
  - name: ${PIPELINE}
    channel: C0123APPSET
    stages:
${STAGES.map((name) => `      - { name: ${name}, cluster: prod, applications: { namespace: argocd, selector: "app.kubernetes.io/part-of=checkout" } }`).join('\n')}
`);
    const after = new Harness(plain);
    for (const [k, v] of h.records) after.records.set(k, structuredClone(v));
    // Any fact of the release meets the new config; CI's announcement of it does.
    expect(after.apply({ kind: 'release', source: 'ci', receivedAt: T0 + 600_000, pipeline: PIPELINE, releaseId, images: [], commit: REV })).toEqual(['applied']);
    const r = after.record(releaseId, PIPELINE)!;
    expect(r.stages.map((st) => st.stepProgress)).toEqual([undefined, undefined, undefined]);
    expect(r.appSets).toBeUndefined();
    expect(outOfOrder(after)).toEqual([]);
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

/**
 * Step 3 started: the ApplicationSet moved a step-3 child on, or the child synced to the revision.
 * The ApplicationSet as the record holds it (the newest heard, from its own facts or from the
 * membership the worker keeps beside the records): step membership comes from it, so without it
 * nothing is judged.
 */
function step3Started(r: ReleaseRecord | undefined, delivered: readonly Observation[]): boolean {
  const appSet = r?.appSets?.['prod/argocd/appset:checkout'];
  if (!appSet) return false;
  const view = latestView(delivered);
  return STEPS[2]!.some((n) => {
    const m = appSet.members[n];
    const op = view.apps.get(n)?.op;
    return (m !== undefined && m.targetRevisions.includes(REV) && (m.status === 'Pending' || m.status === 'Progressing')) || op?.revision === REV || (op?.phase === 'Running' && view.apps.get(n)?.revision === REV);
  });
}

describe('ApplicationSet step stages, whatever the delivery', () => {
  const clean = rollingSyncTimeline(STEPS, REV);
  const faulty = rollingSyncTimeline(STEPS, REV, { staleCache: 'checkout-eu-1' });
  const refresh = faulty.at(-1) as Observation;

  it('a clean rollout in any order: never Failed, no out-of-order reply ever; Complete only while every step is Healthy at the revision, and after a resync', () => {
    // Every delivery here falls within the unhealthy grace: the grace is for deliveries that lag longer.
    expect((2 * clean.length + STEPS.flat().length + 1) * 1000).toBeLessThan(GRACE);
    fc.assert(
      fc.property(deliveries(clean.length), (order) => {
        const h = new Harness(config);
        deliver(h, [...shuffled(clean, order), ...resync(clean)], (r, delivered) => {
          expect(r?.status).not.toBe('Failed');
          expect(outOfOrder(h)).toEqual([]);
          if (r?.status === 'Complete') expect(everyStepHealthyAt(delivered)).toBe(true);
        });
        expect(h.record(releaseId, PIPELINE)?.status).toBe('Complete');
      }),
      { numRuns: 200 },
    );
  });

  it('with the stale-cache fault: never Complete; the reply once the evidence arrived (the child compared after step 3 started), never before, naming that child', () => {
    fc.assert(
      fc.property(deliveries(faulty.length), (order) => {
        const h = new Harness(config);
        deliver(h, [...shuffled(faulty, order), ...resync(faulty)], (r, delivered) => {
          expect(r?.status).not.toBe('Complete');
          const evidence = delivered.includes(refresh);
          if (!evidence) expect(outOfOrder(h)).toEqual([]);
          // Step membership (which step is behind) comes from the ApplicationSet: the rule waits for it.
          if (evidence && step3Started(r, delivered)) expect(outOfOrder(h)).toHaveLength(1);
        });
        const r = h.record(releaseId, PIPELINE)!;
        expect(r.status).toBe('Failed');
        expect(r.stages[1]?.healthyAt).toBeUndefined();
        expect(outOfOrder(h)).toHaveLength(1);
        expect(outOfOrder(h)[0]?.effect.detail.outOfOrder).toMatchObject({ startedStep: 3, behindSteps: [2], behind: [{ application: 'checkout-eu-1' }] });
      }),
      { numRuns: 200 },
    );
  });
});
