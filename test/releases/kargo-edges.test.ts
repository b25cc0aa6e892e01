/**
 * Edge cases of the Kargo rules, through the worker's own batch step (the reduce harness): an
 * Unhealthy Kargo Stage is reported when its grace ends, with no fact to tell it (a due-time
 * re-evaluation the reducer asks for); a Stage's removal holds against older observations of it,
 * delivered late, while a Stage re-created or seen again later counts again; a CI announcement
 * made after its Freight opened a `freight-` release joins that release.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReleaseAnnouncedFact, WatchdogFact } from '../../src/facts/fact.js';
import { normaliseKargoPromotion } from '../../src/facts/normalise-kargo.js';
import { promotionSchema } from '../../src/model/kargo-promotion.js';
import { joinedRelease } from '../../src/releases/worker/kargo-announce.js';
import { reduceReleaseBatch } from '../../src/releases/worker/reducer-worker.js';
import { Harness } from '../helpers/reduce-harness.js';
import { freightName, freightRef, KARGO_PROJECT, KARGO_REPO, kargoShopConfig, kargoStageFact, kargoStageRemoval, promotionName } from '../helpers/kargo-facts.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const GRACE_MS = 2 * 60_000;

const config = kargoShopConfig({ dev: 'stage: dev', prod: 'selector: "tier=prod"' });

const recheck = (dueAt: number, releaseId = 'rel-1'): WatchdogFact => ({ kind: 'watchdog', source: 'watchdog', receivedAt: dueAt, pipeline: 'shop', releaseId, silentSince: dueAt, recheck: true });

describe('an Unhealthy Kargo Stage is reported when its grace ends', () => {
  const unhealthyAfterHealthy = (h: Harness): number => {
    h.apply(kargoStageFact('dev', { rv: 10, freight: 1, promotion: 'running' }, T0));
    h.apply(kargoStageFact('dev', { rv: 11, freight: 1, promotion: 'succeeded', health: 'Healthy' }, T0 + 1_000));
    const at = T0 + 5_000;
    h.apply(kargoStageFact('dev', { rv: 12, freight: 1, promotion: 'succeeded', health: 'Unhealthy' }, at));
    return at;
  };

  it('the reducer asks to be reduced again when the grace ends, and the reply goes out then with no other fact', () => {
    const h = new Harness(config);
    const since = unhealthyAfterHealthy(h);
    expect(h.replies('degraded')).toEqual([]);
    const asked = h.effects.filter((e) => e.effect.type === 'release.recheck').map((e) => e.effect);
    expect(asked).toContainEqual({ id: `recheck:${since + GRACE_MS}`, type: 'release.recheck', dueAt: since + GRACE_MS });
    // The due time comes (the watchdog queue's delayed job): nothing else was heard.
    expect(h.apply(recheck(since + GRACE_MS))).toEqual(['applied']);
    const [reply] = h.replies('degraded');
    expect(reply?.effect).toMatchObject({ stage: 'dev', target: { name: 'dev' }, detail: { message: 'Stage Unhealthy' } });
    // Asked again (a redelivery): the reply is not repeated, the record not rewritten.
    expect(h.apply(recheck(since + GRACE_MS))).toEqual(['ignored']);
    expect(h.replies('degraded')).toHaveLength(1);
  });

  it('a Stage healthy again before the grace ends: the recheck finds nothing due and changes nothing', () => {
    const h = new Harness(config);
    const since = unhealthyAfterHealthy(h);
    h.apply(kargoStageFact('dev', { rv: 13, freight: 1, promotion: 'succeeded', health: 'Healthy' }, since + 30_000));
    const before = structuredClone(h.record('rel-1', 'shop'));
    expect(h.apply(recheck(since + GRACE_MS))).toEqual(['ignored']);
    expect(h.replies('degraded')).toEqual([]);
    expect(h.record('rel-1', 'shop')).toEqual(before);
  });
});

describe("a Kargo Stage's removal holds against older observations of it", () => {
  const config = kargoShopConfig({ prod: 'selector: "tier=prod"' });
  const PROD = { labels: { tier: 'prod' } };
  const prodA = (h: Harness, at: number) => {
    h.apply(kargoStageFact('prod-a', { ...PROD, rv: 10, freight: 1, promotion: 'running' }, at));
    h.apply(kargoStageFact('prod-a', { ...PROD, rv: 12, freight: 1, promotion: 'succeeded', health: 'Healthy' }, at + 1));
  };
  const prodB = {
    created: (at: number) => kargoStageFact('prod-b', { ...PROD, rv: 5 }, at),
    promoting: (at: number) => kargoStageFact('prod-b', { ...PROD, rv: 11, freight: 1, promotion: 'running' }, at),
    removed: (at: number) => kargoStageRemoval('prod-b', { ...PROD, rv: 13, freight: 1, promotion: 'running' }, at, 'tier=prod'),
  };
  const prodStage = (h: Harness) => h.record('rel-1', 'shop')!.stages.find((s) => s.name === 'prod')!;
  const counts = (h: Harness, stage: string) => {
    const prod = prodStage(h);
    return Object.keys(prod.targets).some((k) => k.endsWith(`kargo:${stage}`)) || prod.pending.some((k) => k.endsWith(`kargo:${stage}`));
  };

  it('a Stage fact observed before the removal and delivered after it does not make the Stage a target again', () => {
    const h = new Harness(config);
    h.apply(prodB.created(T0));
    h.apply(prodB.promoting(T0 + 1));
    prodA(h, T0 + 2);
    expect(h.record('rel-1', 'shop')!.status).not.toBe('Complete');
    h.apply(prodB.removed(T0 + 3));
    expect(h.record('rel-1', 'shop')!.status).toBe('Complete');
    // Redelivered late, out of order: the promotion and the Stage as it was created.
    expect(h.apply(prodB.promoting(T0 + 4))).toEqual(['out-of-order']);
    expect(h.apply(prodB.created(T0 + 5))).toEqual(['out-of-order']);
    expect(counts(h, 'prod-b')).toBe(false);
    expect(h.record('rel-1', 'shop')!.status).toBe('Complete');
  });

  it('a Running Promotion older than the removal does not bring the Stage back; a newer one (the Stage re-created) does', () => {
    const h = new Harness(config);
    prodA(h, T0);
    h.apply(prodB.promoting(T0 + 1));
    h.apply(prodB.removed(T0 + 2));
    const promotion = (rv: number) => normaliseKargoPromotion(
      promotionSchema.parse({ metadata: { namespace: KARGO_PROJECT, name: promotionName('prod-b', 1), resourceVersion: String(rv) }, spec: { stage: 'prod-b', freight: freightName(1) }, status: { phase: 'Running', freight: freightRef(1) } }),
      'prod',
      T0 + 3,
      'watch',
      { freight: () => undefined, stageLabels: () => ({ tier: 'prod' }) },
    );
    expect(h.apply(promotion(12))).toEqual(['out-of-order']);
    expect(counts(h, 'prod-b')).toBe(false);
    expect(h.apply(promotion(30))).toEqual(['applied']);
    expect(counts(h, 'prod-b')).toBe(true);
  });

  it('a Stage re-created under the same name (a new uid), or seen again later (back in the selector), counts again', () => {
    const h = new Harness(config);
    prodA(h, T0);
    h.apply(prodB.promoting(T0 + 1));
    h.apply(prodB.removed(T0 + 2));
    expect(h.record('rel-1', 'shop')!.status).toBe('Complete');
    h.apply(kargoStageFact('prod-b', { ...PROD, rv: 40, uid: 'uid-prod-b-2' }, T0 + 3));
    expect(counts(h, 'prod-b')).toBe(true);
    expect(h.record('rel-1', 'shop')!.status).not.toBe('Complete');

    const again = new Harness(config);
    prodA(again, T0);
    again.apply(prodB.promoting(T0 + 1));
    again.apply(prodB.removed(T0 + 2));
    again.apply(kargoStageFact('prod-b', { ...PROD, rv: 14, freight: 1, promotion: 'running' }, T0 + 3));
    expect(counts(again, 'prod-b')).toBe(true);
  });

  it('a removal older than a later observation (relabelled out, then back in, delivered in reverse) removes nothing', () => {
    const h = new Harness(config);
    prodA(h, T0);
    h.apply(kargoStageFact('prod-b', { ...PROD, rv: 20, freight: 1, promotion: 'running' }, T0 + 1));
    expect(h.apply(prodB.removed(T0 + 2))).toEqual(['out-of-order']);
    expect(counts(h, 'prod-b')).toBe(true);
  });

  it('under any order and repetition, once the removal is heard the removed Stage never counts, and the release completes', () => {
    const facts = [prodB.created, prodB.promoting, prodB.removed, (at: number) => kargoStageFact('prod-a', { ...PROD, rv: 10, freight: 1, promotion: 'running' }, at), (at: number) => kargoStageFact('prod-a', { ...PROD, rv: 12, freight: 1, promotion: 'succeeded', health: 'Healthy' }, at)];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: facts.length - 1 }), { maxLength: 20 }).chain((extra) => fc.shuffledSubarray([...facts.keys(), ...extra], { minLength: facts.length + extra.length })),
        (order) => {
          const h = new Harness(config);
          let removed = false;
          order.forEach((i, k) => {
            h.apply(facts[i]!(T0 + k * 1000));
            removed ||= i === 2;
            if (removed && h.record('rel-1', 'shop')) expect(counts(h, 'prod-b'), `order ${order.join(',')}`).toBe(false);
          });
          expect(h.record('rel-1', 'shop')!.status, `order ${order.join(',')}`).toBe('Complete');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("a CI announcement after its Freight's release opened joins that release", () => {
  const config = kargoShopConfig({ dev: 'stage: dev' });
  const announcement = (releaseId: string, author = 'alice'): ReleaseAnnouncedFact => ({ kind: 'release', source: 'ci', receivedAt: T0 + 10_000, pipeline: 'shop', releaseId, images: [`${KARGO_REPO}:7.0.0`], commit: 'abc1234def', author });

  it('the batch step records the CI id on the Freight\'s release, once, and the release keeps its id and its stages', () => {
    const h = new Harness(config);
    h.apply(kargoStageFact('dev', { rv: 10, freight: 7, releaseId: null, promotion: 'succeeded', health: 'Healthy' }, T0));
    const freightRelease = `freight-${freightName(7)}`;
    const record = h.record(freightRelease, 'shop')!;
    expect(record.idSource).toBe('freight');
    const route = { pipeline: config.pipelines.find((p) => p.name === 'shop')!, releaseId: freightRelease };
    const input = { config, knownTargets: {}, previousOfTarget: new Map<string, string>() };
    const step = reduceReleaseBatch(structuredClone(record), [{ fact: announcement('rel-ci-7'), route }], input);
    expect(step.outcomes).toEqual(['applied']);
    expect(step.record).toMatchObject({ releaseId: freightRelease, announcedAs: 'rel-ci-7', author: 'alice', commit: 'abc1234def', status: 'Complete' });
    expect(Object.keys(step.record!.stages[0]!.targets)).toHaveLength(1);
    // The same announcement again changes nothing.
    expect(reduceReleaseBatch(structuredClone(step.record!), [{ fact: announcement('rel-ci-7'), route }], input).outcomes).toEqual(['ignored']);
  });

  it('which release an announcement joins: a Freight\'s release not joined by another id, unless CI\'s id has a release of its own', () => {
    const h = new Harness(config);
    h.apply(kargoStageFact('dev', { rv: 10, freight: 7, releaseId: null, promotion: 'succeeded', health: 'Healthy' }, T0));
    const freightRelease = h.record(`freight-${freightName(7)}`, 'shop')!;
    expect(joinedRelease(announcement('rel-ci-7'), freightRelease, undefined)).toBe(freightRelease.releaseId);
    // Asked again, CI's id finds the Freight's release it joined (the alias).
    expect(joinedRelease(announcement('rel-ci-7'), { ...freightRelease, announcedAs: 'rel-ci-7' }, { ...freightRelease, announcedAs: 'rel-ci-7' })).toBe(freightRelease.releaseId);
    expect(joinedRelease(announcement('rel-ci-9'), { ...freightRelease, announcedAs: 'rel-ci-7' }, undefined)).toBeUndefined();
    expect(joinedRelease(announcement('rel-ci-7'), freightRelease, { ...freightRelease, releaseId: 'rel-ci-7' })).toBeUndefined();
    expect(joinedRelease(announcement('rel-ci-7'), { ...freightRelease, releaseId: 'rel-6' }, undefined)).toBeUndefined();
    expect(joinedRelease(announcement('rel-ci-7'), undefined, undefined)).toBeUndefined();
  });
});
