/**
 * Each schema is for one object type (issue 20): a Secret or an Application given where a Rollout
 * belongs is refused by the Rollout schema itself, with that one reason at `kind` or `apiVersion`,
 * on every path that parses with it (webhook bodies, watch events, cluster reads). Objects that
 * say neither (notification templates never render them) are accepted.
 */
import { describe, expect, it } from 'vitest';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { analysisRunSchema } from '../../src/model/analysis-run.js';
import { applicationCoreSchema, applicationSchema } from '../../src/model/application.js';
import { applicationSetSchema } from '../../src/model/application-set.js';
import { freightSchema } from '../../src/model/kargo-freight.js';
import { promotionRequestSchema } from '../../src/model/kargo-promotion-request.js';
import { promotionSchema } from '../../src/model/kargo-promotion.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { rolloutSchema } from '../../src/model/rollout.js';
import { fixture } from '../helpers/rollout-bodies.js';

const meta = { namespace: 'shop', name: 'checkout', resourceVersion: '7', generation: 3 };

/** Each schema, its type as its CRD names it, and a minimal object it accepts. */
const TYPES = [
  ['Rollout', 'argoproj.io/v1alpha1', rolloutSchema, { metadata: meta }],
  ['AnalysisRun', 'argoproj.io/v1alpha1', analysisRunSchema, { metadata: meta, spec: {} }],
  ['Application', 'argoproj.io/v1alpha1', applicationSchema, { metadata: meta }],
  ['Application', 'argoproj.io/v1alpha1', applicationCoreSchema, { metadata: meta }],
  ['ApplicationSet', 'argoproj.io/v1alpha1', applicationSetSchema, { metadata: meta }],
  ['Stage', 'kargo.akuity.io/v1alpha1', stageSchema, { metadata: meta }],
  ['Freight', 'kargo.akuity.io/v1alpha1', freightSchema, { metadata: meta }],
  ['Promotion', 'kargo.akuity.io/v1alpha1', promotionSchema, { metadata: meta, spec: { stage: 'prod' } }],
  ['PromotionRequest', 'kargo.akuity.io/v1alpha1', promotionRequestSchema, { metadata: meta, spec: { stage: 'prod', freight: 'f1' } }],
] as const;

describe.each(TYPES)('the %s schema', (kind, apiVersion, schema, object) => {
  it('accepts the object with its own kind and apiVersion, and with neither (null or empty too)', () => {
    expect(schema.safeParse({ apiVersion, kind, ...object }).success).toBe(true);
    expect(schema.safeParse(object).success).toBe(true);
    expect(schema.safeParse({ apiVersion: null, kind: null, ...object }).success).toBe(true);
    expect(schema.safeParse({ apiVersion: '', kind: '', ...object }).success).toBe(true);
    expect(schema.safeParse({ kind, ...object }).success).toBe(true);
  });

  it('refuses another kind, naming it', () => {
    const result = schema.safeParse({ apiVersion: 'v1', kind: 'Secret', ...object, data: { token: 'c2VjcmV0' } });
    expect(result.error?.issues).toEqual([expect.objectContaining({ path: ['kind'], message: `expected ${kind}, got Secret` })]);
  });

  it('refuses its own kind in another group or version', () => {
    for (const wrong of ['v1', 'argoproj.io/v1beta1', 'kargo.akuity.io/v1beta1', 'example.com/v1alpha1'].filter((v) => v !== apiVersion)) {
      const result = schema.safeParse({ apiVersion: wrong, kind, ...object });
      expect(result.error?.issues).toEqual([expect.objectContaining({ path: ['apiVersion'], message: `expected ${apiVersion}, got ${wrong}` })]);
    }
  });

  it('quotes an odd kind and names a non-string one by its type', () => {
    expect(schema.safeParse({ kind: 'Rollout\n<@U1>', ...object }).error?.issues[0]?.message).toMatch(/got "Rollout\\n<@U1>"/);
    expect(schema.safeParse({ kind: 7, ...object }).error?.issues[0]?.message).toBe(`expected ${kind}, got a number`);
    expect(schema.safeParse({ kind: 'K'.repeat(10_000), ...object }).error?.issues[0]?.message.length).toBeLessThan(120);
  });
});

describe('inside a fact body', () => {
  const aborted = fixture('aborted');

  it('a Secret on the Rollouts path is refused at rollout.kind, with no other issue', () => {
    const result = rolloutFactBody.safeParse({ event: 'on-glidepath-rollout-aborted', rollout: { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'shop', name: 'db' }, data: {} } });
    expect(result.error?.issues).toEqual([expect.objectContaining({ path: ['rollout', 'kind'], message: 'expected Rollout, got Secret' })]);
  });

  it('an Application on the Rollouts path is refused at rollout.kind, though its metadata would do', () => {
    const application = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: aborted.rollout.metadata, status: { sync: { status: 'Synced' } } };
    const result = rolloutFactBody.safeParse({ event: 'on-glidepath-rollout-aborted', rollout: application });
    expect(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual(['rollout.kind: expected Rollout, got Application']);
  });

  it('a template body (no kind, no apiVersion) is a Rollout as before', () => {
    expect(rolloutFactBody.safeParse(aborted).success).toBe(true);
  });
});
