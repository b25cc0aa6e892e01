/**
 * End to end through real parts: a user changes the (simulated) cluster with client-node, the
 * Rollouts controller simulator moves the canary, the notifications engine POSTs Glidepath's fact
 * bodies to the real ingest, the reducer worker builds the release record in real Redis, and the
 * read API shows what the user would see.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { NotificationsEngine } from '../../sandbox/kube/controllers/notifications.js';
import { startSampleWorld, type SampleWorld } from '../../sandbox/kube/world.js';
import { DEV_TOKEN, dropPrefix, getJson, INGEST_TOKEN, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/wait.js';
import { startTestCluster, type TestCluster } from './support.js';

const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('cluster change → notification → ingest → reducer → release record', () => {
  const env = testEnv();
  const clock = new FakeClock();
  let app: Glidepath;
  let cluster: TestCluster;
  let engine: NotificationsEngine;
  const run = randomBytes(4).toString('hex');
  const releaseId = (n: number): string => `rel-e2e-${run}-${n}`;

  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env);
    cluster = await startTestCluster({
      clock,
      controllers: { rollouts: { podReadyMs: 10_000 }, notifications: { rollouts: { webhook: { url: `${app.url}/v1/facts/rollouts`, token: INGEST_TOKEN } } } },
    });
    engine = cluster.notifications[0]!;
  });
  afterAll(async () => {
    await cluster.stop();
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  async function record(id: string, want: (r: any) => boolean): Promise<any> {
    return waitFor(async () => {
      const r = await getJson(`${app.url}/v1/releases/checkout/${id}`);
      return r.status === 200 && want(r.json) ? r.json : undefined;
    }, `release ${id}`);
  }

  it('a canary paused in the cluster is a Paused prod stage at step 2/3; promoting it ends Healthy', async () => {
    const api = cluster.customObjects();
    await api.createNamespacedCustomObject({
      ...ROLLOUTS,
      body: rolloutManifest({
        namespace: 'shop',
        name: 'checkout',
        image: 'registry.example.com/shop/checkout:1.28.0',
        steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }],
        labels: { 'app.kubernetes.io/part-of': 'checkout', env: 'prod', 'hangar.io/release-tracked': 'true' },
        annotations: { 'hangar.io/release-id': releaseId(1) },
      }),
    });
    await clock.advance(0);
    await engine.idle();
    const first = await record(releaseId(1), (r) => r.stages.find((s: { name: string }) => s.name === 'prod')?.status === 'Healthy');
    expect(first.images).toEqual(['registry.example.com/shop/checkout:1.28.0']);

    // The release: CI bumps the image and the release id (as a GitOps sync would).
    await api.patchNamespacedCustomObject(
      {
        ...ROLLOUTS,
        name: 'checkout',
        body: [
          { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.example.com/shop/checkout:1.29.0' },
          { op: 'replace', path: '/metadata/annotations/hangar.io~1release-id', value: releaseId(2) },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await clock.advance(10_000);
    await engine.idle();
    const paused = await record(releaseId(2), (r) => r.stages.find((s: { name: string }) => s.name === 'prod')?.status === 'Paused');
    const prod = paused.stages.find((s: { name: string }) => s.name === 'prod');
    const target = prod.targets['prod/shop/checkout'];
    expect(target).toMatchObject({ phase: 'Paused', step: { index: 1, count: 3 } });
    expect(target.pause.reason).toBe('CanaryPauseStep');
    expect(paused.images).toEqual(['registry.example.com/shop/checkout:1.29.0']);

    // Approve (what the Approve button does): clear pauseConditions on the status subresource.
    await api.patchNamespacedCustomObjectStatus({ ...ROLLOUTS, name: 'checkout', body: { status: { pauseConditions: null } } }, merge);
    await clock.advance(10_000);
    await clock.advance(10_000);
    await engine.idle();
    const healthy = await record(releaseId(2), (r) => r.stages.find((s: { name: string }) => s.name === 'prod')?.status === 'Healthy');
    expect(healthy.stages.find((s: { name: string }) => s.name === 'prod').targets['prod/shop/checkout'].podHash).toBe(
      (await api.getNamespacedCustomObject({ ...ROLLOUTS, name: 'checkout' })).status.currentPodHash,
    );
    expect(engine.deliveries.every((d) => d.outcome === 'delivered')).toBe(true);
  });
});

describe('sample world → Glidepath: a release through the RollingSync steps', () => {
  const env = testEnv();
  const clock = new FakeClock();
  let app: Glidepath;
  let world: SampleWorld;

  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env);
    world = await startSampleWorld({
      clock,
      webhooks: { rolloutsUrl: `${app.url}/v1/facts/rollouts`, argocdUrl: `${app.url}/v1/facts/argocd`, tokens: { prod: INGEST_TOKEN, dev: DEV_TOKEN } },
    });
    await clock.advance(30_000);
    await idle(world);
  });
  afterAll(async () => {
    await world.stop();
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('staging pauses at its canary step while prod has not started; promoting staging lets the AppSet move on', async () => {
    const id = `rel-world-${randomBytes(4).toString('hex')}`;
    world.releaseCheckout('1.29.0', id);
    await clock.advance(15_000);
    await idle(world);
    const stageOf = (r: any, name: string) => r.stages.find((s: { name: string }) => s.name === name);
    const paused = await waitFor(async () => {
      const r = await getJson(`${app.url}/v1/releases/checkout/${id}`);
      return r.status === 200 && stageOf(r.json, 'staging')?.status === 'Paused' ? r.json : undefined;
    }, `release ${id} paused in staging`);
    expect(Object.keys(stageOf(paused, 'staging').targets)).toEqual(['prod/shop/checkout-staging']);
    expect(Object.keys(stageOf(paused, 'prod').targets)).toEqual([]);

    // Approve staging's canary step: it completes, the app turns Healthy, and step 2 (prod-eu) starts.
    const { store } = world.clusters.prod;
    store.patch(store.registry.byKind('Rollout'), 'shop', 'checkout-staging', 'merge', { status: { promoteFull: true } }, { subresource: 'status' });
    await clock.advance(15_000);
    await idle(world);
    const moving = await waitFor(async () => {
      const r = await getJson(`${app.url}/v1/releases/checkout/${id}`);
      return r.status === 200 && stageOf(r.json, 'prod')?.targets['prod/shop/checkout-eu'] ? r.json : undefined;
    }, `release ${id} reaching prod-eu`);
    expect(stageOf(moving, 'staging').status).toBe('Healthy');
    expect(stageOf(moving, 'prod').targets['prod/shop/checkout-us']).toBeUndefined();
  });
});

async function idle(world: SampleWorld): Promise<void> {
  for (const c of Object.values(world.clusters)) for (const n of c.notifications) await n.idle();
}
