/**
 * The Kargo rules under any delivery, through the worker's own batch step (the reduce harness):
 * whatever the order and however often Kargo facts arrive, a release is never Complete while a
 * Kargo Stage of it has not been healthy since its Promotion of the release's Freight; the
 * "healthy since this Promotion" latch holds through Progressing; Freight and finished
 * Promotions never open a thread.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../src/facts/fact.js';
import { normaliseKargoFreight, normaliseKargoPromotion, normaliseKargoStage } from '../../src/facts/normalise-kargo.js';
import { freightSchema } from '../../src/model/kargo-freight.js';
import { promotionSchema } from '../../src/model/kargo-promotion.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { Harness } from '../helpers/reduce-harness.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const PROJECT = 'kargo-checkout';
const STAGES = ['dev', 'staging', 'prod-a', 'prod-b'] as const;
type StageName = (typeof STAGES)[number];

const config = testConfig(`  - name: shop
    channel: C0123SHOP
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - { name: dev, cluster: prod, kargo: { project: ${PROJECT}, stage: dev } }
      - { name: staging, cluster: prod, kargo: { project: ${PROJECT}, stage: "regex:^stag" } }
      - { name: prod, cluster: prod, kargo: { project: ${PROJECT}, selector: "tier=prod" } }
`);
config.settings.unhealthyGraceMinutes = 1e9;

const freightName = (n: number) => `${n}`.padStart(40, 'f');
const ref = (n: number) => ({ name: freightName(n), origin: { kind: 'Warehouse', name: 'checkout' }, images: [{ repoURL: 'r.example/shop/checkout', tag: `${n}.0.0`, annotations: { 'hangar.io/release-id': `rel-${n}` } }] });
const promotionName = (stage: string, n: number) => `${stage}.01j${String(n).padStart(23, '0')}.${freightName(n).slice(0, 7)}`;

type Observed = 'none' | 'promoting' | 'succeeded' | 'healthy' | 'progressing' | 'failed';

/** A Stage object as Kargo writes it, for Freight `n` in state `state`. */
function stageObject(stage: StageName, rv: number, n: number, state: Observed): unknown {
  const labels = stage.startsWith('prod') ? { tier: 'prod' } : {};
  const promo = { name: promotionName(stage, n), freight: ref(n) };
  const status =
    state === 'none'
      ? {}
      : state === 'promoting'
        ? { currentPromotion: promo, health: { status: 'Unknown' } }
        : {
            lastPromotion: { ...promo, status: { phase: state === 'failed' ? 'Failed' : 'Succeeded', message: state === 'failed' ? 'boom' : undefined, finishedAt: '2026-08-20T09:00:00Z' }, finishedAt: '2026-08-20T09:00:00Z' },
            freightHistory: state === 'failed' ? [] : [{ id: freightName(n), items: { 'Warehouse/checkout': ref(n) } }],
            health: { status: state === 'healthy' ? 'Healthy' : state === 'failed' ? 'Unknown' : 'Progressing' },
          };
  return { metadata: { namespace: PROJECT, name: stage, uid: `uid-${stage}`, resourceVersion: String(rv), generation: 1, labels }, spec: {}, status };
}

const stageFact = (stage: StageName, rv: number, n: number, state: Observed, at: number): Fact =>
  normaliseKargoStage(stageSchema.parse(stageObject(stage, rv, n, state)), 'prod', at, 'watch');

/** One release (Freight 1) walking dev → staging → prod-a, prod-b: every observation, in the order Kargo makes them. */
function walk(): { fact: (at: number) => Fact; stage: StageName; healthy: boolean }[] {
  const out: { fact: (at: number) => Fact; stage: StageName; healthy: boolean }[] = [];
  let rv = 100;
  for (const stage of STAGES) {
    out.push({ stage, healthy: false, fact: ((r) => (at: number) => stageFact(stage, r, 0, 'none', at))(rv++) });
  }
  for (const stage of STAGES) {
    for (const state of ['promoting', 'succeeded', 'healthy', 'progressing', 'healthy'] as const) {
      const r = rv++;
      out.push({ stage, healthy: state === 'healthy', fact: (at: number) => stageFact(stage, r, 1, state, at) });
    }
  }
  return out;
}

describe('Kargo facts under any delivery (the worker batch step)', () => {
  it('order and duplication never make a release Complete while one of its Kargo Stages has not been healthy since its Promotion', () => {
    const steps = walk();
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: steps.length - 1 }), { minLength: 1, maxLength: 60 }), (order) => {
        const h = new Harness(config);
        const healthy = new Set<StageName>();
        const heard = new Set<StageName>();
        order.forEach((i, k) => {
          const step = steps[i]!;
          h.apply(step.fact(T0 + k * 1000));
          heard.add(step.stage);
          if (step.healthy) healthy.add(step.stage);
          const record = h.record('rel-1', 'shop');
          if (record?.status === 'Complete') {
            for (const stage of record.stages) expect(stage.pending, `${stage.name} pending`).toEqual([]);
            // Every Kargo Stage the pipeline has heard of has been healthy for Freight 1.
            for (const s of heard) expect(healthy.has(s), `${s} was never healthy, yet rel-1 is Complete`).toBe(true);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('the latch holds through Progressing: a Stage healthy since its Promotion stays healthy and done, and says what it is now', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('Healthy', 'Progressing', 'Unknown', 'NotApplicable'), { minLength: 1, maxLength: 12 }), (healths) => {
        const h = new Harness(config);
        let rv = 10;
        h.apply(stageFact('dev', rv++, 1, 'promoting', T0));
        h.apply(stageFact('dev', rv++, 1, 'healthy', T0 + 1000));
        const doneAt = h.record('rel-1', 'shop')!.stages[0]!.healthyAt;
        expect(doneAt).toBeDefined();
        healths.forEach((health, k) => {
          const object = stageObject('dev', rv++, 1, 'succeeded') as { status: { health: { status: string } } };
          object.status.health.status = health;
          h.apply(normaliseKargoStage(stageSchema.parse(object), 'prod', T0 + 2000 + k * 1000, 'watch'));
          const dev = h.record('rel-1', 'shop')!.stages[0]!;
          const target = Object.values(dev.targets)[0]!;
          expect(target.phase).toBe('Healthy');
          expect(dev.status).toBe('Healthy');
          expect(dev.healthyAt).toBe(doneAt);
          expect(target.message).toBe(health === 'Healthy' ? '' : `healthy since promotion · now ${health}`);
        });
        expect(h.replies('degraded')).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('Freight and finished or pending Promotions open no thread, however many a relist brings', () => {
    const h = new Harness(config);
    for (let n = 1; n <= 20; n++) {
      h.apply(normaliseKargoFreight(freightSchema.parse({ metadata: { namespace: PROJECT, name: freightName(n), resourceVersion: String(n) }, alias: `alias-${n}`, ...ref(n) }), 'prod', T0, 'watch-resync'));
      for (const phase of ['Succeeded', 'Failed', 'Pending']) {
        const promotion = { metadata: { namespace: PROJECT, name: promotionName('dev', n), resourceVersion: String(100 + n), annotations: { 'kargo.akuity.io/create-actor': 'admin' } }, spec: { stage: 'dev', freight: freightName(n) }, status: { phase, freight: ref(n) } };
        h.apply(normaliseKargoPromotion(promotionSchema.parse(promotion), 'prod', T0, 'watch-resync'));
      }
    }
    expect(h.records.size).toBe(0);
    // A running one does, and then the Freight's alias and the Promotion's actor show on it.
    const running = { metadata: { namespace: PROJECT, name: promotionName('dev', 21), resourceVersion: '500', annotations: { 'kargo.akuity.io/create-actor': 'email:alice@example.com' } }, spec: { stage: 'dev', freight: freightName(21) }, status: { phase: 'Running', currentStep: 1, freight: ref(21) } };
    h.apply(normaliseKargoPromotion(promotionSchema.parse(running), 'prod', T0, 'watch'));
    h.apply(normaliseKargoFreight(freightSchema.parse({ metadata: { namespace: PROJECT, name: freightName(21), resourceVersion: '501' }, alias: 'wise-owl', ...ref(21) }), 'prod', T0, 'watch'));
    expect([...h.records.keys()]).toEqual(['shop/rel-21']);
    const target = Object.values(h.record('rel-21', 'shop')!.stages[0]!.targets)[0]!;
    expect(target.kargo).toMatchObject({ freight: { alias: 'wise-owl' }, promotion: { phase: 'Running', actor: 'email:alice@example.com', step: { number: 2 } } });
  });
});
