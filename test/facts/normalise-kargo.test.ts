/**
 * Kargo objects into facts: which Freight and Promotion a Stage observation is about (current,
 * else last, else the Freight it holds; a target-aware Stage's PromotionRequests), the failing
 * step of a Promotion, the verification of the Freight held, and the release id a Freight's images
 * carry. Objects as Kargo writes them (shapes from the CRDs in sandbox/kube/crds).
 */
import { describe, expect, it } from 'vitest';
import { normaliseKargoPromotion, normaliseKargoStage, type KargoLookup } from '../../src/facts/normalise-kargo.js';
import { promotionSchema } from '../../src/model/kargo-promotion.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { kargoReleaseId } from '../../src/routing/route-kargo.js';
import { freightImageDigests, imagesDigest } from '../../src/routing/kargo-route-hints.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const F1 = 'a'.repeat(40);
const F2 = 'b'.repeat(40);
const ref = (name: string, tag: string, annotations: Record<string, string> = {}) => ({
  name,
  origin: { kind: 'Warehouse', name: 'checkout' },
  images: [{ repoURL: 'r.example/shop/checkout', tag, digest: `sha256:${name.slice(0, 8)}`, annotations }],
  commits: [{ repoURL: 'https://git.example.com/shop/checkout.git', id: 'abc1234def5678' }],
});
const stage = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  stageSchema.parse({ metadata: { namespace: 'kargo-checkout', name: 'prod', uid: 'u1', resourceVersion: '42', labels: { tier: 'prod' } }, spec, status });
const observe = (s: ReturnType<typeof stage>, lookup?: KargoLookup) => normaliseKargoStage(s, 'prod', T0, 'watch', lookup).stage;

describe('a Kargo Stage observation', () => {
  it('is about the current Promotion while one runs, not the Freight the Stage still holds', () => {
    const obs = observe(stage({ currentPromotion: { name: 'prod.01j.bbbbbbb', freight: ref(F2, '2.0.0') }, freightHistory: [{ id: F1, items: { 'Warehouse/checkout': ref(F1, '1.0.0') } }], health: { status: 'Unknown' } }));
    expect(obs.promotion).toEqual({ name: 'prod.01j.bbbbbbb', via: 'Promotion', phase: 'Running' });
    expect(obs.freight).toMatchObject({ name: F2, images: ['r.example/shop/checkout:2.0.0'], digests: [`r.example/shop/checkout@sha256:${F2.slice(0, 8)}`], resolved: true });
    expect(obs.currentFreight).toBe(F1);
  });

  it('after a failed Promotion: its phase, the failing step (alias) and its message', () => {
    const obs = observe(
      stage({
        lastPromotion: {
          name: 'prod.01j.bbbbbbb',
          freight: ref(F2, '2.0.0'),
          finishedAt: '2026-08-20T09:01:00Z',
          status: {
            phase: 'Errored',
            message: 'step "step-4" met error threshold of 1',
            stepExecutionMetadata: [{ alias: 'step-1', status: 'Succeeded' }, { alias: 'git-push', status: 'Errored', message: 'remote: permission denied' }],
          },
        },
        freightHistory: [{ id: F1, items: { 'Warehouse/checkout': ref(F1, '1.0.0') } }],
      }),
    );
    expect(obs.promotion).toMatchObject({ phase: 'Errored', failedStep: { alias: 'git-push', message: 'remote: permission denied' }, message: 'step "step-4" met error threshold of 1' });
    expect(obs.freight?.name).toBe(F2);
    expect(obs.verification).toBeUndefined();
  });

  it('holding the promoted Freight: its newest verification, with the AnalysisRun', () => {
    const obs = observe(
      stage(
        {
          lastPromotion: { name: 'prod.01j.aaaaaaa', freight: ref(F1, '1.0.0'), status: { phase: 'Succeeded' } },
          freightHistory: [{ id: F1, items: { 'Warehouse/checkout': ref(F1, '1.0.0') }, verificationHistory: [{ id: 'v2', phase: 'Failed', message: 'error rate 7%', analysisRun: { name: 'prod.run2', namespace: 'kargo-checkout', phase: 'Failed' }, startTime: '2026-08-20T09:03:00Z' }, { id: 'v1', phase: 'Successful' }] }],
          health: { status: 'Healthy' },
        },
        { verification: { analysisTemplates: [{ name: 'smoke' }] } },
      ),
    );
    expect(obs).toMatchObject({ verificationConfigured: true, health: 'Healthy', verification: { id: 'v2', phase: 'Failed', message: 'error rate 7%', analysisRun: 'prod.run2' } });
  });

  it('a target-aware Stage (Kargo main) reports its PromotionRequest; the Freight it names comes from the watch', () => {
    const lookup: KargoLookup = { freight: (_ns, name) => (name === F2 ? { name: F2, alias: 'wise-owl', images: ['r.example/shop/checkout:2.0.0'], digests: [], annotations: {}, commits: [], resolved: true } : undefined), stageLabels: () => undefined };
    const aware = { targets: { selectors: [{ matchLabels: { region: 'eu' } }] } };
    const running = observe(stage({ currentPromotionRequest: { name: 'prod-7x2', phase: 'Running', freight: { name: F2 } }, lastPromotion: { name: 'old', freight: ref(F1, '1.0.0'), status: { phase: 'Succeeded' } } }, aware), lookup);
    expect(running).toMatchObject({ targetAware: true, promotion: { name: 'prod-7x2', via: 'PromotionRequest', phase: 'Running' }, freight: { name: F2, alias: 'wise-owl', resolved: true } });
    const failed = observe(stage({ lastPromotionRequest: { name: 'prod-7x2', phase: 'Failed', freight: { name: F1 }, finishedAt: '2026-08-20T09:05:00Z' } }, aware));
    // Unknown to the watch: the name alone, which no release id can be derived from.
    expect(failed.promotion).toMatchObject({ via: 'PromotionRequest', phase: 'Failed', finishedAt: '2026-08-20T09:05:00Z' });
    expect(failed.freight).toMatchObject({ name: F1, resolved: false });
    const config = testConfig();
    expect(kargoReleaseId(config.pipelines[0]!, failed.freight!)).toBeUndefined();
  });
});

describe('a Kargo Promotion fact', () => {
  it('says who asked for it (create-actor), the step it is at, and the Stage labels the watch knows', () => {
    const promotion = promotionSchema.parse({
      metadata: { namespace: 'kargo-checkout', name: 'prod.01j.aaaaaaa', resourceVersion: '77', annotations: { 'kargo.akuity.io/create-actor': 'email:alice@example.com' } },
      spec: { stage: 'prod', freight: F1, steps: [{ uses: 'git-clone' }, { uses: 'kustomize-set-image', as: 'update-image' }, { uses: 'argocd-update' }] },
      status: { phase: 'Running', currentStep: 1, freight: ref(F1, '1.0.0'), stepExecutionMetadata: [{ alias: 'step-1', status: 'Succeeded' }, { alias: 'update-image', status: 'Running' }] },
    });
    const fact = normaliseKargoPromotion(promotion, 'prod', T0, 'watch', { freight: () => undefined, stageLabels: () => ({ tier: 'prod' }) });
    expect(fact.target).toEqual({ kind: 'KargoStage', cluster: 'prod', namespace: 'kargo-checkout', name: 'prod' });
    expect(fact.stageLabels).toEqual({ tier: 'prod' });
    expect(fact.promotion).toMatchObject({ phase: 'Running', actor: 'email:alice@example.com', step: { number: 2, count: 3, alias: 'update-image' }, resourceVersion: '77' });
  });
});

describe('a PromotionRequest\'s child Promotion (one per Target of a target-aware Stage)', () => {
  const child = (phase: string, extra: Record<string, unknown> = {}) =>
    normaliseKargoPromotion(
      promotionSchema.parse({
        metadata: {
          namespace: 'kargo-checkout',
          name: 'fleet.us-1.01j.aaaaaaa',
          resourceVersion: '90',
          ownerReferences: [{ apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'PromotionRequest', name: 'fleet.01j.aaaaaaa', uid: 'pr1', controller: true }],
        },
        spec: { stage: 'fleet', freight: F1, target: 'us-1', steps: [{ uses: 'git-clone' }, { uses: 'kustomize-set-image', as: 'update-image' }] },
        status: { phase, ...extra },
      }),
      'prod',
      T0,
      'watch',
    );

  it('tells about its request: Running while it runs (a running Promotion opens a release), nothing of the request\'s phase otherwise', () => {
    expect(child('Running', { currentStep: 1 }).promotion).toEqual({ name: 'fleet.01j.aaaaaaa', via: 'PromotionRequest', phase: 'Running', resourceVersion: '90' });
    expect(child('Succeeded').promotion).toEqual({ name: 'fleet.01j.aaaaaaa', via: 'PromotionRequest', phase: '', resourceVersion: '90' });
    expect(child('Pending').target).toEqual({ kind: 'KargoStage', cluster: 'prod', namespace: 'kargo-checkout', name: 'fleet' });
  });

  it('that failed names its Target, itself, the failing step and the message', () => {
    const failed = child('Failed', { message: 'git push refused', stepExecutionMetadata: [{ alias: 'step-1', status: 'Succeeded' }, { alias: 'update-image', status: 'Failed', message: 'remote rejected' }] });
    expect(failed.promotion).toEqual({
      name: 'fleet.01j.aaaaaaa',
      via: 'PromotionRequest',
      phase: '',
      resourceVersion: '90',
      failedTarget: { name: 'us-1', promotion: 'fleet.us-1.01j.aaaaaaa', phase: 'Failed' },
      failedStep: { alias: 'update-image', message: 'remote rejected' },
      message: 'git push refused',
    });
  });
});

describe('the release a Freight belongs to', () => {
  it('is the release id its images carry (an OCI annotation), else freight-<name>; CI may have written the images by tag, digest or both', () => {
    const pipeline = testConfig().pipelines[0]!;
    const annotated = observe(stage({ freightHistory: [{ id: F1, items: { 'Warehouse/checkout': ref(F1, '1.0.0', { 'hangar.io/release-id': 'rel-9' }) } }] })).freight!;
    expect(kargoReleaseId(pipeline, annotated)).toEqual({ releaseId: 'rel-9', idSource: 'annotation' });
    const plain = observe(stage({ freightHistory: [{ id: F1, items: { 'Warehouse/checkout': ref(F1, '1.0.0') } }] })).freight!;
    expect(kargoReleaseId(pipeline, plain)).toEqual({ releaseId: `freight-${F1}`, idSource: 'freight' });
    expect(freightImageDigests(plain)).toEqual([
      imagesDigest(['r.example/shop/checkout:1.0.0']),
      imagesDigest([`r.example/shop/checkout@sha256:${F1.slice(0, 8)}`]),
      imagesDigest([`r.example/shop/checkout:1.0.0@sha256:${F1.slice(0, 8)}`]),
    ]);
  });
});
