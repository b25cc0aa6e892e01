import { describe, expect, it } from 'vitest';
import { freightAvailability, goDurationMs } from '../../src/kube/kargo-availability.js';
import { freightSchema } from '../../src/model/kargo-freight.js';
import { stageSchema } from '../../src/model/kargo-stage.js';

const now = Date.parse('2026-08-20T12:00:00Z');
const meta = (name: string) => ({ name, namespace: 'kargo-demo', resourceVersion: '1' });
const stage = (sources: Record<string, unknown>, origin = 'shop') => stageSchema.parse({ metadata: meta('prod'), spec: { requestedFreight: [{ origin: { kind: 'Warehouse', name: origin }, sources }] } });
const freight = (status: Record<string, unknown> = {}, origin = 'shop') => freightSchema.parse({ metadata: meta('f0e1d2c3b4a5968778695a4b3c2d1e0f98765432'), alias: 'jolly-jaguar', origin: { kind: 'Warehouse', name: origin }, status });
const verified = (stages: string[], since = '2026-08-20T11:00:00Z') => ({
  verifiedIn: Object.fromEntries(stages.map((s) => [s, { verifiedAt: since }])),
  currentlyIn: Object.fromEntries(stages.map((s) => [s, { since }])),
});

describe('Kargo Freight availability (Stage.IsFreightAvailable)', () => {
  it('All needs every upstream Stage; OneOf (the default) needs one', () => {
    expect(freightAvailability(stage({ stages: ['eu', 'us'], availabilityStrategy: 'All' }), freight(verified(['eu'])), now)).toEqual({ available: false, reason: 'needs all of eu, us: not verified in us' });
    expect(freightAvailability(stage({ stages: ['eu', 'us'], availabilityStrategy: 'All' }), freight(verified(['eu', 'us'])), now)).toEqual({ available: true, reason: 'verified in eu, us' });
    expect(freightAvailability(stage({ stages: ['eu', 'us'] }), freight(verified(['us'])), now)).toEqual({ available: true, reason: 'verified in us' });
    expect(freightAvailability(stage({ stages: ['eu', 'us'] }), freight(), now)).toEqual({ available: false, reason: 'needs one of eu, us: not verified in eu, not verified in us' });
  });

  it('soak counts only where verified, and the longest earlier soak counts too', () => {
    expect(freightAvailability(stage({ stages: ['staging'], requiredSoakTime: '2h' }), freight(verified(['staging'])), now).reason).toBe('verified in staging but soaked 1h of the required 2h');
    const left = { verifiedIn: { staging: { verifiedAt: '2026-08-19T10:00:00Z', longestSoak: '3h0m0s' } } };
    expect(freightAvailability(stage({ stages: ['staging'], requiredSoakTime: '2h' }), freight(left), now)).toEqual({ available: true, reason: 'verified in staging' });
  });

  it('approval skips everything; another origin is never available', () => {
    expect(freightAvailability(stage({ stages: ['staging'] }), freight({ approvedFor: { prod: {} } }), now)).toEqual({ available: true, reason: 'manually approved for prod' });
    expect(freightAvailability(stage({ direct: true }, 'payments'), freight(), now)).toEqual({ available: false, reason: 'Stage prod does not request Freight from Warehouse shop' });
  });

  it('reads Go durations as Kargo writes them', () => {
    expect(goDurationMs('1h30m')).toBe(5_400_000);
    expect(goDurationMs('1.5h')).toBe(5_400_000);
    expect(goDurationMs('90s')).toBe(90_000);
    expect(goDurationMs('3h0m0s')).toBe(10_800_000);
  });
});
