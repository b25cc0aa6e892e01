import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_RULES } from '../../sandbox/kube/auth.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { ARGOCD_CONTEXT_ANNOTATION, type KargoController } from '../../sandbox/kube/controllers/kargo.js';
import { freightManifest, promotionRequest, stageManifest, warehouseManifest } from '../../sandbox/kube/kargo-builders.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { rejection, startTestCluster, statusOf, type TestCluster } from './support.js';

const KARGO = { group: 'kargo.akuity.io', version: 'v1alpha1', namespace: 'kargo-checkout' } as const;
const USERS = [
  { name: 'admin', token: 'admin-token', rules: ADMIN_RULES },
  // May create Promotions, but holds no `promote` on any Stage.
  { name: 'dev', token: 'dev-token', rules: [{ verbs: ['get', 'list', 'watch', 'create'], apiGroups: ['kargo.akuity.io'], resources: ['*'] }] },
  {
    name: 'releaser',
    token: 'releaser-token',
    rules: [
      { verbs: ['get', 'list', 'watch', 'create', 'patch'], apiGroups: ['kargo.akuity.io'], resources: ['promotions'] },
      { verbs: ['promote'], apiGroups: ['kargo.akuity.io'], resources: ['stages'], resourceNames: ['dev', 'staging'] },
    ],
  },
];

let clock: FakeClock;
let cluster: TestCluster;
let kargo: KargoController;
let freight: KubeObject;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  cluster = await startTestCluster({ clock, users: USERS, namespaces: ['kargo-checkout', 'argocd'], kargoAdmission: true, controllers: { kargo: { stepDurationMs: 1000 } } });
  const { store } = cluster;
  kargo = cluster.kargo!;
  const k = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');
  store.create(k('Warehouse'), 'kargo-checkout', warehouseManifest('kargo-checkout', 'checkout', 'registry.example.com/shop/checkout'));
  freight = store.create(k('Freight'), 'kargo-checkout', freightManifest('kargo-checkout', 'checkout', { repoURL: 'registry.example.com/shop/checkout', tag: '1.29.0' }, 'frozen-tiger'));
  store.create(k('Stage'), 'kargo-checkout', stageManifest({ namespace: 'kargo-checkout', name: 'dev', warehouse: 'checkout', apps: [{ name: 'checkout-dev' }] }));
  store.create(k('Stage'), 'kargo-checkout', stageManifest({ namespace: 'kargo-checkout', name: 'staging', warehouse: 'checkout', upstream: ['dev'] }));
  store.create(store.registry.byKind('Application'), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'checkout-dev' },
    spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop-dev' } },
  });
  setAppHealth('Healthy');
});
afterEach(async () => {
  await cluster.stop();
});

function setAppHealth(status: string): void {
  cluster.store.mutate(cluster.store.registry.byKind('Application'), 'argocd', 'checkout-dev', (a) => {
    a.status = { health: { status }, sync: { status: 'Synced', revision: 'abc' } };
  });
}

async function promote(stage: string, as = 'releaser'): Promise<KubeObject> {
  const api = cluster.customObjects(as === 'admin' ? undefined : `${as}@sandbox`);
  return (await api.createNamespacedCustomObject({ ...KARGO, plural: 'promotions', body: promotionRequest('kargo-checkout', stage, freight.metadata.name) })) as KubeObject;
}

const get = (plural: string, name: string): KubeObject => cluster.store.get(cluster.store.registry.types.find((t) => t.plural === plural)!, 'kargo-checkout', name);

describe('Kargo controller simulator', () => {
  it('names a Promotion <stage>.<ulid>.<short freight>, labels it, and walks Pending → Running → Succeeded', async () => {
    const created = await promote('dev');
    expect(created.metadata.name).toMatch(new RegExp(`^dev\\.[0-9a-hjkmnp-tv-z]{26}\\.${freight.metadata.name.slice(0, 7)}$`));
    expect(created.metadata.labels?.['kargo.akuity.io/stage']).toBe('dev');
    expect(created.metadata.annotations?.['kargo.akuity.io/create-actor']).toBe('kubernetes:releaser');
    expect(created.spec.steps.map((s: { uses: string }) => s.uses)).toEqual(['git-clone', 'kustomize-set-image', 'git-commit', 'git-push', 'argocd-update']);
    const name = created.metadata.name;
    await clock.advance(0);
    expect(get('promotions', name).status).toMatchObject({ phase: 'Running', currentStep: 0 });
    expect(get('stages', 'dev').status.currentPromotion.name).toBe(name);
    await clock.advance(5000);
    const done = get('promotions', name);
    expect(done.status.phase).toBe('Succeeded');
    expect(done.status.stepExecutionMetadata.map((m: { status: string }) => m.status)).toEqual(['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']);
    const stage = get('stages', 'dev');
    expect(stage.status.lastPromotion.name).toBe(name);
    expect(stage.status.currentPromotion).toBeUndefined();
    expect(stage.status.freightHistory[0].items['Warehouse/checkout'].name).toBe(freight.metadata.name);
    expect(stage.status.freightSummary).toBe(freight.metadata.name);
    expect(stage.status.health.status).toBe('Healthy');
    expect(get('freights', freight.metadata.name).status.verifiedIn.dev).toEqual({ verifiedAt: '2026-08-20T09:00:05Z' });
    expect(JSON.parse(stage.metadata.annotations?.[ARGOCD_CONTEXT_ANNOTATION] ?? 'null')).toEqual([{ name: 'checkout-dev', namespace: 'argocd' }]);
  });

  it('an app that autoscales flips the Stage to Progressing; verifiedIn stays', async () => {
    await promote('dev');
    await clock.advance(5000);
    setAppHealth('Progressing');
    await clock.advance(0);
    const stage = get('stages', 'dev');
    expect(stage.status.health.status).toBe('Progressing');
    expect(stage.status.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Progressing' });
    expect(get('freights', freight.metadata.name).status.verifiedIn.dev).toBeDefined();
  });

  it('refuses Freight not yet available to a Stage, and a user without `promote` on the Stage (403)', async () => {
    const unavailable = statusOf(await rejection(promote('staging')));
    expect(unavailable.code).toBe(403);
    expect(unavailable.message).toContain('Freight is not available to this Stage');
    const forbidden = statusOf(await rejection(promote('dev', 'dev')));
    expect(forbidden).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(forbidden.message).toContain('is not permitted to promote to Stage "dev"');
    // Once verified in dev, the Freight is available to staging.
    await promote('dev');
    await clock.advance(5000);
    const staging = await promote('staging');
    expect(staging.metadata.name).toMatch(/^staging\./);
  });

  it('aborts through the kargo.akuity.io/abort annotation, and a failing Promotion ends Failed with its message', async () => {
    const first = await promote('dev');
    await clock.advance(1000);
    await cluster.customObjects('releaser@sandbox').patchNamespacedCustomObject(
      { ...KARGO, plural: 'promotions', name: first.metadata.name, body: { metadata: { annotations: { 'kargo.akuity.io/abort': 'terminate' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await clock.advance(0);
    const aborted = get('promotions', first.metadata.name);
    expect(aborted.status.phase).toBe('Aborted');
    expect(aborted.status.stepExecutionMetadata.at(-1).status).toBe('Aborted');

    kargo.faults.fail = () => ({ phase: 'Failed', message: 'step "git-push" failed: remote rejected' });
    const second = await promote('dev');
    await clock.advance(6000);
    expect(get('promotions', second.metadata.name).status).toMatchObject({ phase: 'Failed', message: 'step "git-push" failed: remote rejected' });
    const stage = get('stages', 'dev');
    expect(stage.status.health.status).toBe('Unknown');
    expect(stage.status.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'LastPromotionFailed' });
  });

  it('the Promotion spec is immutable', async () => {
    const p = await promote('dev');
    const err = statusOf(await rejection(cluster.customObjects().patchNamespacedCustomObject(
      { ...KARGO, plural: 'promotions', name: p.metadata.name, body: [{ op: 'replace', path: '/spec/stage', value: 'staging' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    )));
    expect(err.code).toBe(422);
    expect(err.message).toContain('spec is immutable');
  });

  it('fails a Promotion at a named step, and verifies a Stage with spec.verification only once Healthy (Running → Successful or Failed)', async () => {
    kargo.faults.fail = () => ({ phase: 'Errored', message: 'cannot render kustomization', atStep: 'update-image' });
    const failed = await promote('dev');
    await clock.advance(6000);
    const meta = get('promotions', failed.metadata.name).status.stepExecutionMetadata;
    expect(meta.map((m: { alias: string; status: string }) => `${m.alias}:${m.status}`)).toEqual(['step-1:Succeeded', 'update-image:Errored']);
    expect(get('promotions', failed.metadata.name).status).toMatchObject({ phase: 'Errored', message: 'cannot render kustomization' });
    delete kargo.faults.fail;

    cluster.store.mutate(cluster.store.registry.byKind('Stage', 'kargo.akuity.io'), 'kargo-checkout', 'dev', (s) => void (s.spec.verification = { analysisTemplates: [{ name: 'smoke-test' }] }));
    setAppHealth('Progressing');
    await promote('dev');
    await clock.advance(5000);
    // Not Healthy: no verification starts, and the Freight is not verified.
    expect(get('stages', 'dev').status.freightHistory[0].verificationHistory).toBeUndefined();
    setAppHealth('Healthy');
    await clock.advance(0);
    const running = get('stages', 'dev').status.freightHistory[0].verificationHistory[0];
    expect(running).toMatchObject({ phase: 'Running', analysisRun: { namespace: 'kargo-checkout', phase: 'Running' } });
    expect(get('freights', freight.metadata.name).status?.verifiedIn?.dev).toBeUndefined();
    await clock.advance(1000);
    expect(get('stages', 'dev').status.freightHistory[0].verificationHistory[0]).toMatchObject({ id: running.id, phase: 'Successful', analysisRun: { name: running.analysisRun.name, phase: 'Successful' } });
    expect(get('freights', freight.metadata.name).status.verifiedIn.dev).toBeDefined();
  });
});

