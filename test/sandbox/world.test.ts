import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { GLIDEPATH_SANDBOX_TOKEN, startSampleWorld, type SampleWorld } from '../../sandbox/kube/world.js';

let clock: FakeClock;
let world: SampleWorld;
let kc: KubeConfig;

beforeAll(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startSampleWorld({ clock, kubeconfigPath: join(tempDir('glidepath-world-'), 'kubeconfig') });
  await clock.advance(30_000);
  kc = new KubeConfig();
  kc.loadFromFile(world.kubeconfigPath!);
});
afterAll(async () => {
  await world.stop();
});

function api(context: string): CustomObjectsApi {
  const c = new KubeConfig();
  c.loadFromFile(world.kubeconfigPath!);
  c.setCurrentContext(context);
  return c.makeApiClient(CustomObjectsApi);
}

const list = async (context: string, plural: string, group = 'argoproj.io', labelSelector?: string): Promise<KubeObject[]> =>
  ((await api(context).listClusterCustomObject({ group, version: 'v1alpha1', plural, labelSelector })) as { items: KubeObject[] }).items;

describe('sample world', () => {
  it('has two clusters reachable through one kubeconfig (contexts dev and prod); a person is admin by default, never the bot', () => {
    expect(kc.getContexts().map((c) => c.name)).toEqual(expect.arrayContaining(['dev', 'prod', 'admin@dev', 'viewer@prod']));
    expect(kc.getCurrentContext()).toBe('admin@prod');
  });

  it('deployed every Rollout through Argo CD, all Healthy and labelled for the pipeline', async () => {
    const prod = await list('prod', 'rollouts', 'argoproj.io', 'app.kubernetes.io/part-of=checkout');
    expect(prod.map((r) => r.metadata.name).sort()).toEqual(['checkout-eu', 'checkout-staging', 'checkout-us']);
    for (const r of prod) expect(r.status.phase).toBe('Healthy');
    const dev = await list('dev', 'rollouts');
    expect(dev.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).toEqual(['shop/checkout-dev']);
    const ledger = await list('prod', 'rollouts', 'argoproj.io', 'app.kubernetes.io/part-of=ledger');
    expect(ledger[0]!.metadata.annotations?.['argocd.argoproj.io/tracking-id']).toBe('argocd-apps_payments-ledger:argoproj.io/Rollout:payments/ledger');
  });

  it('runs an ApplicationSet with three RollingSync steps, the last gated (maxUpdate 0)', async () => {
    const [appSet] = await list('prod', 'applicationsets');
    expect(appSet!.spec.strategy.rollingSync.steps).toHaveLength(3);
    expect(appSet!.status.applicationStatus.map((e: { application: string; step: string }) => `${e.application}:${e.step}`)).toEqual([
      'checkout-prod-eu:2',
      'checkout-prod-us:3',
      'checkout-staging:1',
    ]);
    const apps = await list('prod', 'applications');
    expect(apps.map((a) => `${a.metadata.namespace}/${a.metadata.name}`).sort()).toEqual(['argocd-apps/payments-ledger', 'argocd/checkout-prod-eu', 'argocd/checkout-prod-us', 'argocd/checkout-staging']);
  });

  it('has a Kargo project with dev → staging → prod (classic) and fleet (target-aware, its Targets by label)', async () => {
    const stages = await list('prod', 'stages', 'kargo.akuity.io');
    expect(stages.map((s) => s.metadata.name).sort()).toEqual(['dev', 'fleet', 'prod', 'staging']);
    expect(stages.filter((s) => s.spec.targets).map((s) => [s.metadata.name, s.spec.targets.selectors])).toEqual([['fleet', [{ matchLabels: { fleet: 'checkout' } }]]]);
    const prod = stages.find((s) => s.metadata.name === 'prod')!;
    expect(prod.spec.requestedFreight[0].sources.stages).toEqual(['staging']);
    expect((await list('prod', 'freights', 'kargo.akuity.io')).map((f) => f.alias).sort()).toEqual(['brave-lynx', 'steady-otter']);
  });

  it('a new release moves through the RollingSync steps in order and stops at the gate', async () => {
    world.releaseCheckout('1.29.0', 'rel-1.29.0');
    await clock.advance(5_000);
    const image = async (name: string) => (await list('prod', 'rollouts')).find((r) => r.metadata.name === name)!.spec.template.spec.containers[0].image;
    expect(await image('checkout-staging')).toBe('registry.example.com/shop/checkout:1.29.0');
    expect(await image('checkout-eu')).toBe('registry.example.com/shop/checkout:1.28.0');
    const staging = (await list('prod', 'rollouts')).find((r) => r.metadata.name === 'checkout-staging')!;
    await clock.advance(10_000);
    const pausedStaging = (await list('prod', 'rollouts')).find((r) => r.metadata.name === 'checkout-staging')!;
    expect(pausedStaging.status.phase).toBe('Paused');
    // nginx traffic routing: the weights are in the status, as the Rollouts controller writes them.
    expect(pausedStaging.status.canary.weights).toMatchObject({ canary: { weight: 20, serviceName: 'checkout-staging-canary' }, stable: { weight: 80, serviceName: 'checkout-staging-stable' } });
    expect(staging.metadata.annotations?.['hangar.io/release-id']).toBe('rel-1.29.0');
  });

  it('a release with a PostSync hook pins prod-eu\'s sync Running while its canary is paused', async () => {
    world.releaseCheckout('1.30.0', 'rel-1.30.0', { postSyncHook: true });
    await clock.advance(15_000);
    const { store } = world.clusters.prod;
    const rollouts = store.registry.byKind('Rollout');
    store.patch(rollouts, 'shop', 'checkout-staging', 'merge', { status: { promoteFull: true } }, { subresource: 'status' });
    await clock.advance(30_000);
    const eu = store.get(rollouts, 'shop', 'checkout-eu');
    expect(eu.spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.30.0');
    expect(eu.status.phase).toBe('Paused');
    const app = store.get(store.registry.byKind('Application'), 'argocd', 'checkout-prod-eu');
    expect(app.status.operationState).toMatchObject({ phase: 'Running', message: 'waiting for completion of hook batch/Job/checkout-prod-eu-postsync' });
  });
});

describe('sample world: Kargo', () => {
  it('promotes Freight dev → staging as the glidepath user; staging syncs its Argo CD app and reports its health', async () => {
    const kargoClock = new FakeClock('2026-08-20T09:00:00Z');
    const w = await startSampleWorld({ clock: kargoClock, kubeconfigPath: join(tempDir('glidepath-world-'), 'kubeconfig') });
    try {
      await kargoClock.advance(30_000);
      const c = new KubeConfig();
      c.loadFromFile(w.kubeconfigPath!);
      const kargo = c.makeApiClient(CustomObjectsApi);
      const K = { group: 'kargo.akuity.io', version: 'v1alpha1', namespace: 'kargo-checkout' } as const;
      const freights = ((await kargo.listNamespacedCustomObject({ ...K, plural: 'freights' })) as { items: KubeObject[] }).items;
      const freight = freights.find((f) => f.alias === 'brave-lynx')!;
      const promote = async (stage: string): Promise<string> =>
        ((await kargo.createNamespacedCustomObject({ ...K, plural: 'promotions', body: { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', metadata: { generateName: 'promo-' }, spec: { stage, freight: freight.metadata.name } } })) as KubeObject).metadata.name;
      const dev = await promote('dev');
      expect(dev.startsWith('dev.')).toBe(true);
      await kargoClock.advance(30_000);
      const stage = async (name: string) => (await kargo.getNamespacedCustomObject({ ...K, plural: 'stages', name })) as KubeObject;
      expect((await stage('dev')).status.lastPromotion).toMatchObject({ name: dev, status: { phase: 'Succeeded' } });
      const staging = await promote('staging');
      await kargoClock.advance(30_000);
      const s = await stage('staging');
      expect(s.status.lastPromotion).toMatchObject({ name: staging, status: { phase: 'Succeeded' } });
      expect(s.status.health.output.applicationStatuses.map((a: { name: string }) => a.name)).toEqual(['checkout-staging']);
      const app = w.clusters.prod.store.get(w.clusters.prod.store.registry.byKind('Application'), 'argocd', 'checkout-staging');
      expect(app.status.operationState.operation.initiatedBy).toEqual({ username: 'kargo-controller', automated: true });
    } finally {
      await w.stop();
    }
  });
});

describe('sample world: a target-aware Kargo Stage', () => {
  it('fleet is promoted through prod\'s Kargo API with Glidepath\'s token: a PromotionRequest fanned out to its Targets (not lab)', async () => {
    const kargoClock = new FakeClock('2026-08-20T09:00:00Z');
    const w = await startSampleWorld({ clock: kargoClock, kubeconfigPath: join(tempDir('glidepath-world-'), 'kubeconfig') });
    try {
      const store = w.clusters.prod.store;
      const k = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');
      const freight = store.list(k('Freight'), 'kargo-checkout').items.find((f) => f.alias === 'brave-lynx')!;
      // Verified upstream (staging) as a person would have got it there: available to fleet.
      store.patch(k('Freight'), 'kargo-checkout', freight.metadata.name, 'merge', { status: { verifiedIn: { staging: { verifiedAt: '2026-08-20T08:00:00Z' } } } }, { subresource: 'status' });
      const res = await fetch(`${w.kargoApi.url}/v1beta1/projects/kargo-checkout/stages/fleet/promotions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${GLIDEPATH_SANDBOX_TOKEN}` },
        body: JSON.stringify({ freight: freight.metadata.name }),
      });
      expect(res.status).toBe(201);
      const request = (await res.json()) as KubeObject;
      expect(request.kind).toBe('PromotionRequest');
      expect(request.spec.targets).toEqual([{ name: 'prod-eu' }, { name: 'prod-us' }]);
      for (let i = 0; i < 60 && store.get(k('PromotionRequest'), 'kargo-checkout', request.metadata.name).status?.phase !== 'Succeeded'; i++) await kargoClock.advance(2_000);
      expect(store.get(k('Stage'), 'kargo-checkout', 'fleet').status.lastPromotionRequest).toMatchObject({ name: request.metadata.name, phase: 'Succeeded' });
      expect(store.list(k('Promotion'), 'kargo-checkout').items.map((p) => p.spec.target).filter(Boolean).sort()).toEqual(['prod-eu', 'prod-us']);
    } finally {
      await w.stop();
    }
  });
});

describe('sample world config for Glidepath', () => {
  it('parses with Glidepath\'s config schema, and every Rollouts stage selects exactly its Rollouts of the world', async () => {
    const { parseConfigFile } = await import('../../src/config/file.js');
    const { sampleWorldConfig } = await import('../../sandbox/kube/world-config.js');
    const worldClock = new FakeClock();
    const w = await startSampleWorld({ clock: worldClock, kubeconfigPath: join(tempDir('glidepath-world-'), 'kubeconfig') });
    try {
      await worldClock.advance(30_000);
      const config = parseConfigFile(sampleWorldConfig({ kubeconfigPath: w.kubeconfigPath! }));
      expect(config.pipelines.map((p) => p.name)).toEqual(['checkout', 'checkout-appset', 'ledger', 'checkout-kargo']);
      const selected: Record<string, string[]> = {};
      for (const p of config.pipelines) {
        for (const s of p.stages) {
          if (!s.rollouts) continue;
          const store = w.clusters[s.cluster as 'dev' | 'prod'].store;
          const found = store.list(store.registry.byKind('Rollout'), s.rollouts.namespace, { labelSelector: s.rollouts.selector.text }).items;
          selected[`${p.name}/${s.name}`] = found.map((r) => r.metadata.name).sort();
        }
      }
      expect(selected).toEqual({
        'checkout/dev': ['checkout-dev'],
        'checkout/staging': ['checkout-staging'],
        'checkout/prod-eu': ['checkout-eu'],
        'checkout/prod-us': ['checkout-us'],
        'ledger/prod': ['ledger'],
      });
    } finally {
      await w.stop();
    }
  });
});
