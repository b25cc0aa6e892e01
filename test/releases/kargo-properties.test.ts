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
import { normaliseKargoFreight, normaliseKargoPromotion } from '../../src/facts/normalise-kargo.js';
import { freightSchema } from '../../src/model/kargo-freight.js';
import { promotionSchema } from '../../src/model/kargo-promotion.js';
import { freightName, freightRef, KARGO_PROJECT, kargoShopConfig, kargoStageFact, promotionName, type StageShape } from '../helpers/kargo-facts.js';
import { Harness } from '../helpers/reduce-harness.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const STAGES = ['dev', 'staging', 'prod-a', 'prod-b'] as const;
type StageName = (typeof STAGES)[number];

const config = kargoShopConfig({ dev: 'stage: dev', staging: 'stage: "regex:^stag"', prod: 'selector: "tier=prod"' });
config.settings.unhealthyGraceMinutes = 1e9;

type Observed = 'none' | 'promoting' | 'succeeded' | 'healthy' | 'progressing';

/** What a Stage says of Freight `n` in state `state`, as Kargo writes it (test/helpers/kargo-facts.ts). */
function shape(n: number, state: Observed): Omit<StageShape, 'rv' | 'labels'> {
  if (state === 'none') return {};
  if (state === 'promoting') return { freight: n, promotion: 'running' };
  return { freight: n, promotion: 'succeeded', health: state === 'healthy' ? 'Healthy' : 'Progressing' };
}

const stageFact = (stage: StageName, rv: number, n: number, state: Observed, at: number): Fact =>
  kargoStageFact(stage, { rv, labels: stage.startsWith('prod') ? { tier: 'prod' } : {}, ...shape(n, state) }, at);

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
      fc.property(fc.array(fc.constantFrom<NonNullable<StageShape['health']>>('Healthy', 'Progressing', 'Unknown', 'NotApplicable'), { minLength: 1, maxLength: 12 }), (healths) => {
        const h = new Harness(config);
        let rv = 10;
        h.apply(stageFact('dev', rv++, 1, 'promoting', T0));
        h.apply(stageFact('dev', rv++, 1, 'healthy', T0 + 1000));
        const doneAt = h.record('rel-1', 'shop')!.stages[0]!.healthyAt;
        expect(doneAt).toBeDefined();
        healths.forEach((health, k) => {
          h.apply(kargoStageFact('dev', { rv: rv++, freight: 1, promotion: 'succeeded', health }, T0 + 2000 + k * 1000));
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
      h.apply(normaliseKargoFreight(freightSchema.parse({ metadata: { namespace: KARGO_PROJECT, name: freightName(n), resourceVersion: String(n) }, alias: `alias-${n}`, ...freightRef(n) }), 'prod', T0, 'watch-resync'));
      for (const phase of ['Succeeded', 'Failed', 'Pending']) {
        const promotion = { metadata: { namespace: KARGO_PROJECT, name: promotionName('dev', n), resourceVersion: String(100 + n), annotations: { 'kargo.akuity.io/create-actor': 'admin' } }, spec: { stage: 'dev', freight: freightName(n) }, status: { phase, freight: freightRef(n) } };
        h.apply(normaliseKargoPromotion(promotionSchema.parse(promotion), 'prod', T0, 'watch-resync'));
      }
    }
    expect(h.records.size).toBe(0);
    // A running one does, and then the Freight's alias and the Promotion's actor show on it.
    const running = { metadata: { namespace: KARGO_PROJECT, name: promotionName('dev', 21), resourceVersion: '500', annotations: { 'kargo.akuity.io/create-actor': 'email:alice@example.com' } }, spec: { stage: 'dev', freight: freightName(21) }, status: { phase: 'Running', currentStep: 1, freight: freightRef(21) } };
    h.apply(normaliseKargoPromotion(promotionSchema.parse(running), 'prod', T0, 'watch'));
    h.apply(normaliseKargoFreight(freightSchema.parse({ metadata: { namespace: KARGO_PROJECT, name: freightName(21), resourceVersion: '501' }, alias: 'wise-owl', ...freightRef(21) }), 'prod', T0, 'watch'));
    expect([...h.records.keys()]).toEqual(['shop/rel-21']);
    const target = Object.values(h.record('rel-21', 'shop')!.stages[0]!.targets)[0]!;
    expect(target.kargo).toMatchObject({ freight: { alias: 'wise-owl' }, promotion: { phase: 'Running', actor: 'email:alice@example.com', step: { number: 2 } } });
  });
});
