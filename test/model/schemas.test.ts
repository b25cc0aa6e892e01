import { describe, expect, it } from 'vitest';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { rolloutSchema } from '../../src/model/rollout.js';
import { deriveRolloutState } from '../../src/model/rollout-state.js';
import { fixture, STEPS } from '../helpers/rollout-bodies.js';

describe('one Rollout schema for notification bodies and cluster reads', () => {
  const body = fixture('paused');

  it('accepts metadata.generation as the number the API sends and as the string a template may render, on both paths', () => {
    const asString = { ...body, rollout: { ...body.rollout, metadata: { ...body.rollout.metadata, generation: '12' } } };
    expect(rolloutFactBody.parse(body).rollout.metadata.generation).toBe(12);
    expect(rolloutFactBody.parse(asString).rollout.metadata.generation).toBe(12);
    expect(rolloutSchema.parse(body.rollout).metadata.generation).toBe(12);
    expect(rolloutSchema.parse(asString.rollout).metadata.generation).toBe(12);
  });

  it('refuses a generation that is not an integer, naming the field', () => {
    const bad = { ...body.rollout, metadata: { ...body.rollout.metadata, generation: 'twelve' } };
    const result = rolloutSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['metadata.generation']);
  });

  it('keeps the canary steps of a full object, so a read from the cluster knows the step count and label', () => {
    const full = { ...body.rollout, spec: { ...body.rollout.spec, strategy: { canary: { steps: STEPS } } } };
    const rollout = rolloutSchema.parse(full);
    expect(rollout.spec?.strategy?.canary?.steps).toHaveLength(7);
    expect(deriveRolloutState(rollout).step).toEqual({ index: 1, count: 7, label: 'pause' });
  });
});
