/**
 * Edge cases of the Kargo rules, through the worker's own batch step (the reduce harness): an
 * Unhealthy Kargo Stage is reported when its grace ends, with no fact to tell it (a due-time
 * re-evaluation the reducer asks for).
 */
import { describe, expect, it } from 'vitest';
import type { WatchdogFact } from '../../src/facts/fact.js';
import { Harness } from '../helpers/reduce-harness.js';
import { testConfig } from '../helpers/pipeline.js';
import { KARGO_PROJECT, kargoStageFact } from '../helpers/kargo-facts.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const GRACE_MS = 2 * 60_000;

const config = testConfig(`  - name: shop
    channel: C0123SHOP
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - { name: dev, cluster: prod, kargo: { project: ${KARGO_PROJECT}, stage: dev } }
      - { name: prod, cluster: prod, kargo: { project: ${KARGO_PROJECT}, selector: "tier=prod" } }
`);

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
