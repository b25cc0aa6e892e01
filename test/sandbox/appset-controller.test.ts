import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { REFRESH_ANNOTATION } from '../../sandbox/kube/controllers/argocd.js';
import { SimulatedGit, type DesiredManifests } from '../../sandbox/kube/controllers/git.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';
import { startTestCluster } from './support.js';

const REPO = 'https://git.example.com/shop/deploy.git';
const ENVS = ['dev', 'staging', 'prod'];

interface World {
  clock: FakeClock;
  store: ObjectStore;
  git: SimulatedGit;
  stop(): Promise<void>;
}

function tree(version: string): Record<string, DesiredManifests> {
  return Object.fromEntries(ENVS.map((env) => [`checkout/${env}`, { rollouts: [{ name: 'checkout', image: `registry.example.com/shop/checkout:${version}`, steps: [], annotations: { 'hangar.io/release-id': `rel-${version}` } }] }]));
}

async function world(options: { staleCache?: string[]; prodMaxUpdate?: number } = {}): Promise<World> {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const git = new SimulatedGit();
  git.commit(REPO, 'main', tree('1.28.0'));
  const cluster = await startTestCluster({
    clock,
    namespaces: ['argocd', ...ENVS.map((e) => `shop-${e}`)],
    controllers: {
      rollouts: { podReadyMs: 5000 },
      argocd: [{ git, refreshDelayMs: 1000, jitterMs: 0, syncDurationMs: 2000 }],
      appSet: { faults: { staleCache: options.staleCache ?? false } },
    },
  });
  const { store } = cluster;
  store.create(store.registry.byKind('ApplicationSet'), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 'checkout' },
    spec: {
      generators: [{ list: { elements: ENVS.map((env) => ({ env })) } }],
      strategy: {
        type: 'RollingSync',
        rollingSync: {
          steps: [
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] },
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['staging'] }] },
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }], ...(options.prodMaxUpdate !== undefined ? { maxUpdate: options.prodMaxUpdate } : {}) },
          ],
        },
      },
      template: {
        metadata: { name: 'checkout-{{env}}', labels: { env: '{{env}}', 'app.kubernetes.io/part-of': 'checkout' } },
        spec: {
          project: 'default',
          source: { repoURL: REPO, targetRevision: 'main', path: 'checkout/{{env}}' },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'shop-{{env}}' },
          syncPolicy: { automated: { prune: true } },
        },
      },
    },
  });
  return { clock, store, git, stop: () => cluster.stop() };
}

let w: World;
afterEach(() => w.stop());

const appSet = (): KubeObject => w.store.get(w.store.registry.byKind('ApplicationSet'), 'argocd', 'checkout');
const entry = (env: string): { status: string; step: string; message: string; targetRevisions: string[] } =>
  appSet().status.applicationStatus.find((e: { application: string }) => e.application === `checkout-${env}`);
const image = (env: string): string => w.store.get(w.store.registry.byKind('Rollout'), `shop-${env}`, 'checkout').spec.template.spec.containers[0].image;
const child = (env: string): KubeObject => w.store.get(w.store.registry.byKind('Application'), 'argocd', `checkout-${env}`);

async function refreshAll(): Promise<void> {
  for (const env of ENVS) w.store.patch(w.store.registry.byKind('Application'), 'argocd', `checkout-${env}`, 'merge', { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
  await w.clock.advance(1000);
}

describe('ApplicationSet RollingSync simulator', () => {
  it('generates children owned through a controller ownerReference, with automated sync disabled', async () => {
    w = await world({ prodMaxUpdate: 0 });
    await w.clock.advance(0);
    const c = child('dev');
    expect(c.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ApplicationSet', name: 'checkout', controller: true })]);
    expect(c.spec.syncPolicy.automated).toEqual({ prune: true, enabled: false });
    expect(c.metadata.labels).toMatchObject({ env: 'dev' });
  });

  it('syncs step by step; maxUpdate 0 holds the last step until someone syncs it', async () => {
    w = await world({ prodMaxUpdate: 0 });
    await w.clock.advance(0);
    // Pending, then Progressing as soon as the sync the AppSet wrote has started.
    expect(entry('dev')).toMatchObject({ status: 'Progressing', step: '1', message: 'Application resource completed a sync, updating status from Pending to Progressing' });
    expect(entry('staging')).toMatchObject({ status: 'Waiting', step: '2' });
    expect(child('dev').status.operationState.operation.initiatedBy).toEqual({ username: 'applicationset-controller', automated: true });
    await w.clock.advance(2000);
    // First deploy of a Rollout is Healthy at once, so dev is done and staging's sync has started.
    expect(entry('dev').status).toBe('Healthy');
    // Pending until the app reports a reconcile and an operation after the transition.
    expect(entry('staging').status).toBe('Pending');
    expect(entry('prod').status).toBe('Waiting');
    await w.clock.advance(4000);
    expect(entry('staging').status).toBe('Healthy');
    await w.clock.advance(60_000);
    expect(entry('prod')).toMatchObject({ status: 'Waiting', step: '3' });
    expect(appSet().status.conditions.find((c: { type: string }) => c.type === 'RolloutProgressing')).toMatchObject({ status: 'True', message: 'ApplicationSet is performing rollout of step 3' });
    expect(appSet().status.health.status).toBe('Progressing');
    // The manual gate: a sync of the prod app (what Glidepath's "approve next step" does).
    w.store.mutate(w.store.registry.byKind('Application'), 'argocd', 'checkout-prod', (a) => void (a.operation = { initiatedBy: { username: 'glidepath' }, sync: {} }));
    await w.clock.advance(2000);
    await w.clock.advance(5000);
    expect(entry('prod').status).toBe('Healthy');
    expect(appSet().status.conditions.find((c: { type: string }) => c.type === 'RolloutProgressing')).toMatchObject({ status: 'False', reason: 'ApplicationSetRolloutComplete' });
    expect(entry('prod').targetRevisions).toEqual([w.git.resolve(REPO, 'main')]);
    expect(appSet().status).toMatchObject({ health: { status: 'Healthy' }, resourcesCount: 3 });
    expect(appSet().status.resources.find((r: { name: string }) => r.name === 'checkout-prod')).toMatchObject({ kind: 'Application', status: 'Synced', health: { status: 'Healthy' } });
  });

  it('a new commit: every child goes Waiting with the new targetRevisions, and steps run in order', async () => {
    w = await world();
    await w.clock.advance(30_000);
    expect(ENVS.map((e) => entry(e).status)).toEqual(['Healthy', 'Healthy', 'Healthy']);
    const sha = w.git.commit(REPO, 'main', tree('1.29.0'));
    await refreshAll();
    expect(entry('staging')).toMatchObject({ status: 'Waiting', targetRevisions: [sha] });
    await w.clock.advance(7000);
    expect(image('dev')).toBe('registry.example.com/shop/checkout:1.29.0');
    expect(image('prod')).toBe('registry.example.com/shop/checkout:1.28.0');
    await w.clock.advance(30_000);
    expect(ENVS.map(image)).toEqual(ENVS.map(() => 'registry.example.com/shop/checkout:1.29.0'));
  });

  it('stale-cache fault: a Waiting child read as Synced at the old state jumps to Healthy, so a later step starts first', async () => {
    w = await world({ staleCache: ['checkout-staging'] });
    await w.clock.advance(30_000);
    w.git.commit(REPO, 'main', tree('1.29.0'));
    await refreshAll();
    expect(entry('staging')).toMatchObject({ status: 'Healthy', message: 'Application resource has synced, updating status to Healthy' });
    expect(child('staging').status.sync.status).toBe('OutOfSync');
    await w.clock.advance(30_000);
    // prod (step 3) deployed the new version while staging (step 2) never did.
    expect(image('prod')).toBe('registry.example.com/shop/checkout:1.29.0');
    expect(image('staging')).toBe('registry.example.com/shop/checkout:1.28.0');
  });
});
