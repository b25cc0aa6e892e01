import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { REFRESH_ANNOTATION } from '../../sandbox/kube/controllers/argocd.js';
import { SimulatedGit, type DesiredManifests } from '../../sandbox/kube/controllers/git.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';
import { startTestCluster, type TestCluster } from './support.js';

const REPO = 'https://git.example.com/shop/deploy.git';
let clock: FakeClock;
let cluster: TestCluster;
let store: ObjectStore;
let git: SimulatedGit;

const appRt = () => store.registry.byKind('Application');
const rolloutRt = () => store.registry.byKind('Rollout');
const app = (): KubeObject => store.get(appRt(), 'argocd', 'shop-checkout');
const rollout = (): KubeObject => store.get(rolloutRt(), 'shop', 'checkout');

function manifests(image: string, releaseId: string, extra: Partial<DesiredManifests> = {}): Record<string, DesiredManifests> {
  return { 'checkout/prod': { rollouts: [{ name: 'checkout', image, replicas: 5, annotations: { 'hangar.io/release-id': releaseId }, labels: { env: 'prod' } }], ...extra } };
}

function createApp(syncPolicy: object = {}): void {
  store.create(appRt(), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'shop-checkout' },
    spec: { project: 'default', source: { repoURL: REPO, targetRevision: 'main', path: 'checkout/prod' }, destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' }, syncPolicy },
  });
}

function requestSync(extra: object = {}): void {
  store.mutate(appRt(), 'argocd', 'shop-checkout', (o) => void (o.operation = { initiatedBy: { username: 'glidepath' }, sync: { revision: 'main' }, ...extra }));
}

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  git = new SimulatedGit();
  git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.28.0', 'rel-3'));
  cluster = await startTestCluster({
    clock,
    namespaces: ['argocd', 'shop'],
    controllers: { argocd: [{ git, refreshDelayMs: 3000, reconcileEveryMs: 120_000, jitterMs: 0, syncDurationMs: 2000 }], rollouts: { podReadyMs: 10_000 } },
  });
  store = cluster.store;
});
afterEach(async () => {
  await cluster.stop();
});

describe('Argo CD application controller simulator', () => {
  it('runs operation.sync: Running, then Succeeded with syncResult.revision, and applies the revision to the Rollout', async () => {
    createApp();
    await clock.advance(0);
    expect(app().status.sync.status).toBe('OutOfSync');
    requestSync();
    await clock.advance(0);
    expect(app().status.operationState).toMatchObject({ phase: 'Running', startedAt: '2026-08-20T09:00:00Z' });
    await clock.advance(2000);
    const a = app();
    expect(a.status.operationState).toMatchObject({ phase: 'Succeeded', message: 'successfully synced (all tasks run)', finishedAt: '2026-08-20T09:00:02Z' });
    expect(a.status.operationState.syncResult.revision).toBe(git.resolve(REPO, 'main'));
    expect(a.operation).toBeUndefined();
    expect(a.status.sync).toMatchObject({ status: 'Synced', revision: git.resolve(REPO, 'main') });
    expect(a.status.history).toHaveLength(1);
    expect(rollout().metadata.annotations?.['hangar.io/release-id']).toBe('rel-3');
    expect(rollout().metadata.annotations?.['argocd.argoproj.io/tracking-id']).toBe('shop-checkout:argoproj.io/Rollout:shop/checkout');
    expect(a.status.health.status).toBe('Healthy');
  });

  it('honours the refresh annotation after the reconcile delay, then removes it', async () => {
    createApp();
    requestSync();
    await clock.advance(2000);
    const before = app().status.reconciledAt;
    const sha = git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.29.0', 'rel-4'));
    store.patch(appRt(), 'argocd', 'shop-checkout', 'merge', { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
    await clock.advance(2000);
    expect(app().metadata.annotations?.[REFRESH_ANNOTATION]).toBe('normal');
    expect(app().status.sync.revision).not.toBe(sha);
    await clock.advance(1000);
    const a = app();
    expect(a.metadata.annotations?.[REFRESH_ANNOTATION]).toBeUndefined();
    expect(a.status.reconciledAt).toBe('2026-08-20T09:00:05Z');
    expect(a.status.reconciledAt).not.toBe(before);
    expect(a.status.sync).toMatchObject({ status: 'OutOfSync', revision: sha });
  });

  it('fault behind: an Application it has not got to keeps its old reconciledAt through periodic reconciles and a refresh request, until cleared', async () => {
    createApp();
    await clock.advance(0);
    const before = app().status.reconciledAt;
    cluster.argocd[0]!.faults.behind = ['shop-checkout'];
    store.patch(appRt(), 'argocd', 'shop-checkout', 'merge', { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
    await clock.advance(300_000);
    expect(app().status.reconciledAt).toBe(before);
    expect(app().metadata.annotations?.[REFRESH_ANNOTATION]).toBe('normal');
    cluster.argocd[0]!.faults.behind = [];
    await clock.advance(120_000);
    expect(app().status.reconciledAt).not.toBe(before);
    expect(app().metadata.annotations?.[REFRESH_ANNOTATION]).toBeUndefined();
  });

  it('reconciles periodically and auto-syncs a new commit when automated', async () => {
    createApp({ automated: { prune: true } });
    await clock.advance(2000);
    expect(rollout().spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.28.0');
    git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.29.0', 'rel-4'));
    await clock.advance(60_000);
    expect(rollout().spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.28.0');
    await clock.advance(62_000);
    expect(rollout().spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.29.0');
    expect(app().status.operationState.operation.initiatedBy).toEqual({ username: 'argocd-application-controller', automated: true });
    // The Rollout is now canarying: the app is Progressing, then Suspended at the pause step.
    await clock.advance(10_000);
    expect(app().status.health.status).toBe('Suspended');
  });

  it('a failing sync is retried up to the limit and ends Failed', async () => {
    git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.28.0', 'rel-3', { failSync: 'one or more objects failed to apply, reason: admission webhook "validate.kyverno.svc" denied the request' }));
    createApp();
    requestSync({ retry: { limit: 2 } });
    await clock.advance(2000);
    expect(app().status.operationState).toMatchObject({ phase: 'Running', retryCount: 1 });
    expect(app().status.operationState.message).toMatch(/Retrying attempt #1/);
    await clock.advance(7000);
    expect(app().status.operationState.retryCount).toBe(2);
    await clock.advance(7000);
    const op = app().status.operationState;
    expect(op.phase).toBe('Failed');
    expect(op.message).toContain('admission webhook');
    expect(op.finishedAt).toBeDefined();
  });

  it('an unresolvable revision ends the operation in Error', async () => {
    createApp();
    requestSync({ sync: { revision: 'no-such-branch' } });
    await clock.advance(2000);
    expect(app().status.operationState).toMatchObject({ phase: 'Error' });
    expect(app().status.operationState.message).toContain("unable to resolve 'no-such-branch'");
  });

  it('a PostSync hook keeps the operation Running while the Rollout is paused (hook-pinned sync)', async () => {
    createApp();
    requestSync();
    await clock.advance(2000);
    git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.29.0', 'rel-4', { postSyncHook: true }));
    requestSync();
    await clock.advance(2000);
    await clock.advance(10_000);
    expect(rollout().status.phase).toBe('Paused');
    let op = app().status.operationState;
    expect(op.phase).toBe('Running');
    expect(op.message).toBe('waiting for completion of hook batch/Job/shop-checkout-postsync');
    expect(op.syncResult.resources.find((r: { kind: string }) => r.kind === 'Job')).toMatchObject({ hookType: 'PostSync', hookPhase: 'Running' });
    // A new sync request (a revert) cannot start while the hook pins the operation.
    git.commit(REPO, 'main', manifests('registry.example.com/shop/checkout:1.28.0', 'rel-3'));
    requestSync();
    await clock.advance(60_000);
    expect(rollout().spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.29.0');
    // Full promotion: the hook completes and the operation succeeds. The request written meanwhile
    // was dropped with the finished operation, as upstream does, so the revert never deployed.
    store.patch(rolloutRt(), 'shop', 'checkout', 'merge', { status: { promoteFull: true } }, { subresource: 'status' });
    await clock.advance(10_000);
    expect(rollout().status.phase).toBe('Healthy');
    op = app().status.operationState;
    expect(op.phase).toBe('Succeeded');
    expect(op.syncResult.resources.find((r: { kind: string }) => r.kind === 'Job')).toMatchObject({ hookPhase: 'Succeeded' });
    expect(app().operation).toBeUndefined();
    expect(rollout().spec.template.spec.containers[0].image).toBe('registry.example.com/shop/checkout:1.29.0');
  });
});
