/** The Rollouts simulator's own step text (CanaryStepString), used in RolloutStepCompleted events. */
import { describe, expect, it } from 'vitest';
import { canaryStepText, pauseDurationMs, weightAt } from '../../sandbox/kube/controllers/canary-steps.js';

describe('canary steps as the Rollouts simulator reads them', () => {
  it.each([
    [{ setWeight: 20 }, 'setWeight: 20'],
    [{ pause: {} }, 'pause'],
    [{ pause: { duration: '10m' } }, 'pause: 10m'],
    [{ pause: { duration: 300 } }, 'pause: 300'],
    [{ analysis: { templates: [] } }, 'analysis'],
    [{ experiment: { templates: [] } }, 'experiment'],
    [{ setCanaryScale: { weight: 5 } }, 'setCanaryScale{weight: 5}'],
    [{ setCanaryScale: { matchTrafficWeight: true } }, 'setCanaryScale{matchTrafficWeight: true}'],
    [{ setCanaryScale: { replicas: 2 } }, 'setCanaryScale{replicas: 2}'],
    [{ setHeaderRoute: { name: 'beta' } }, 'setHeaderRoute: beta'],
    [{ setMirrorRoute: { name: 'shadow' } }, 'setMirrorRoute: shadow'],
    [{ plugin: { name: 'acme/gate' } }, 'plugin: acme/gate'],
    [{}, 'invalid'],
  ])('%j reads %j', (step, text) => {
    expect(canaryStepText(step)).toBe(text);
  });

  it('reads pause durations as types.go does and finds the weight in force', () => {
    expect([pauseDurationMs({}), pauseDurationMs({ duration: 30 }), pauseDurationMs({ duration: '90' }), pauseDurationMs({ duration: '1h2m3s' }), pauseDurationMs({ duration: 'soon' })]).toEqual([
      undefined,
      30_000,
      90_000,
      3_723_000,
      -1,
    ]);
    const steps = [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }];
    expect([weightAt(steps, 0), weightAt(steps, 1), weightAt(steps, 2), weightAt([{ pause: {} }], 0)]).toEqual([20, 20, 50, 0]);
  });
});
