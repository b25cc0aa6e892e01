import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { RolloutsController, RolloutEvent } from '../../sandbox/kube/controllers/rollouts.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { startTestCluster, type TestCluster } from './support.js';

const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let clock: FakeClock;
let cluster: TestCluster;
let controller: RolloutsController;
let events: RolloutEvent[];

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  cluster = await startTestCluster({ clock, controllers: { rollouts: { podReadyMs: 10_000 } } });
  controller = cluster.rollouts!;
  events = [];
  controller.onEvent((e) => events.push(e));
});
afterEach(async () => {
  await cluster.stop();
});

const api = () => cluster.customObjects();

async function get(name = 'checkout'): Promise<KubeObject> {
  return (await api().getNamespacedCustomObject({ ...ROLLOUTS, name })) as KubeObject;
}

async function deployStable(image = 'registry.example.com/shop/checkout:1.28.0', extra: Partial<Parameters<typeof rolloutManifest>[0]> = {}): Promise<KubeObject> {
  await api().createNamespacedCustomObject({ ...ROLLOUTS, body: rolloutManifest({ namespace: 'shop', name: 'checkout', image, replicas: 5, ...extra }) });
  await clock.advance(0);
  return get();
}

async function setImage(image: string): Promise<void> {
  await api().patchNamespacedCustomObject(
    { ...ROLLOUTS, name: 'checkout', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
}

/** `kubectl argo rollouts promote`: clear pauseConditions on the status subresource. */
async function promote(): Promise<void> {
  await api().patchNamespacedCustomObjectStatus({ ...ROLLOUTS, name: 'checkout', body: { status: { pauseConditions: null } } }, merge);
}

describe('Argo Rollouts controller simulator', () => {
  it('first deploy goes straight to Healthy with stableRS == currentPodHash', async () => {
    const r = await deployStable();
    expect(r.status).toMatchObject({ phase: 'Healthy', observedGeneration: '1', currentStepIndex: 6, replicas: 5, availableReplicas: 5, canary: {}, blueGreen: {} });
    expect(r.status.stableRS).toBe(r.status.currentPodHash);
    expect(r.status.currentPodHash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{6,10}$/);
    expect(r.status.message).toBeUndefined();
    expect(r.metadata.annotations?.['rollout.argoproj.io/revision']).toBe('1');
  });

  it('walks canary steps: setWeight, indefinite pause until promote, timed pauses, then Healthy', async () => {
    const stable = await deployStable();
    await setImage('registry.example.com/shop/checkout:1.29.0');
    let r = await get();
    expect(r.metadata.generation).toBe(2);
    expect(r.status).toMatchObject({ observedGeneration: '2', currentStepIndex: 0, phase: 'Progressing', message: 'more replicas need to be updated', updatedReplicas: 1 });
    expect(r.status.currentPodHash).not.toBe(stable.status.currentPodHash);
    expect(r.status.stableRS).toBe(stable.status.currentPodHash);
    expect(r.metadata.annotations?.['rollout.argoproj.io/revision']).toBe('2');

    await clock.advance(10_000);
    r = await get();
    expect(r.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused', message: 'CanaryPauseStep', controllerPause: true });
    expect(r.status.pauseConditions).toEqual([{ reason: 'CanaryPauseStep', startTime: '2026-08-20T09:00:10Z' }]);
    expect(r.status.conditions.find((c: { type: string }) => c.type === 'Paused')).toMatchObject({ status: 'True', reason: 'RolloutPaused' });

    // An indefinite pause waits forever.
    await clock.advance(3_600_000);
    expect((await get()).status.phase).toBe('Paused');

    await promote();
    r = await get();
    expect(r.status.currentStepIndex).toBe(2);
    expect(r.status.pauseConditions).toBeUndefined();
    expect(r.status.controllerPause).toBeUndefined();
    expect(r.status.phase).toBe('Progressing');

    await clock.advance(10_000); // setWeight 50 done, timed pause 10m starts
    r = await get();
    expect(r.status).toMatchObject({ currentStepIndex: 3, phase: 'Paused', updatedReplicas: 3 });
    await clock.advance(10 * 60_000);
    r = await get();
    expect(r.status.currentStepIndex).toBe(4);
    await clock.advance(10_000);
    await clock.advance(300_000);
    await clock.advance(10_000);
    r = await get();
    expect(r.status).toMatchObject({ phase: 'Healthy', currentStepIndex: 6, updatedReplicas: 5 });
    expect(r.status.stableRS).toBe(r.status.currentPodHash);
    expect(r.status.conditions.find((c: { type: string }) => c.type === 'Paused')).toMatchObject({ status: 'False' });
    const reasons = events.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['RolloutUpdated', 'RolloutStepCompleted', 'RolloutPaused', 'RolloutResumed', 'RolloutCompleted']));
    expect(events.filter((e) => e.reason === 'RolloutStepCompleted').map((e) => e.message)).toEqual([
      'Rollout step 1/6 completed (setWeight: 20)',
      'Rollout step 2/6 completed (pause)',
      'Rollout step 3/6 completed (setWeight: 50)',
      'Rollout step 4/6 completed (pause: 10m)',
      'Rollout step 5/6 completed (setWeight: 80)',
      'Rollout step 6/6 completed (pause: 300)',
    ]);
  });

  it('hands listeners the pre-reconcile object: the RolloutUpdated event carries the old hash and generation', async () => {
    const stable = await deployStable();
    events.length = 0;
    await setImage('registry.example.com/shop/checkout:1.29.0');
    const updated = events.find((e) => e.reason === 'RolloutUpdated')!;
    expect(updated.before.metadata.generation).toBe(2);
    expect(updated.before.status.observedGeneration).toBe('1');
    expect(updated.before.status.currentPodHash).toBe(stable.status.currentPodHash);
    expect(updated.before.status.phase).toBe('Healthy');
    expect(updated.after.status.observedGeneration).toBe('2');
  });

  it('abort: Degraded with RolloutAborted, step 0, and the Paused condition left stale; retry restarts', async () => {
    await deployStable();
    await setImage('registry.example.com/shop/checkout:1.29.0');
    await clock.advance(10_000);
    expect((await get()).status.phase).toBe('Paused');
    await api().patchNamespacedCustomObjectStatus({ ...ROLLOUTS, name: 'checkout', body: { status: { abort: true } } }, merge);
    let r = await get();
    expect(r.status).toMatchObject({
      abort: true,
      abortedAt: '2026-08-20T09:00:10Z',
      currentStepIndex: 0,
      phase: 'Degraded',
      message: 'RolloutAborted: Rollout aborted update to revision 2',
      updatedReplicas: 0,
    });
    expect(r.status.pauseConditions).toBeUndefined();
    expect(r.status.conditions.find((c: { type: string }) => c.type === 'Paused')).toMatchObject({ status: 'True' });
    expect(events.map((e) => e.reason)).toContain('RolloutAborted');

    await api().patchNamespacedCustomObjectStatus({ ...ROLLOUTS, name: 'checkout', body: { status: { abort: false } } }, merge);
    r = await get();
    expect(r.status.abortedAt).toBeUndefined();
    expect(r.status.phase).toBe('Progressing');
    expect(r.status.currentStepIndex).toBe(0);
    await clock.advance(10_000);
    expect((await get()).status.phase).toBe('Paused');
  });

  it('promoteFull skips the remaining steps; spec.paused pauses manually', async () => {
    await deployStable();
    await setImage('registry.example.com/shop/checkout:1.29.0');
    await api().patchNamespacedCustomObject({ ...ROLLOUTS, name: 'checkout', body: { spec: { paused: true } } }, merge);
    let r = await get();
    expect(r.status).toMatchObject({ phase: 'Paused', message: 'manually paused', observedGeneration: '3' });
    await clock.advance(60_000);
    expect((await get()).status.currentStepIndex).toBe(0);
    await api().patchNamespacedCustomObject({ ...ROLLOUTS, name: 'checkout', body: { spec: { paused: false } } }, merge);
    await api().patchNamespacedCustomObjectStatus({ ...ROLLOUTS, name: 'checkout', body: { status: { promoteFull: true } } }, merge);
    r = await get();
    expect(r.status.currentStepIndex).toBe(6);
    await clock.advance(10_000);
    r = await get();
    expect(r.status.phase).toBe('Healthy');
    expect(r.status.promoteFull).toBeUndefined();
    expect(r.status.stableRS).toBe(r.status.currentPodHash);
  });

  it('a scale-only change bumps generation but keeps the pod hash and revision', async () => {
    const stable = await deployStable();
    await api().patchNamespacedCustomObjectScale({ ...ROLLOUTS, name: 'checkout', body: { spec: { replicas: 8 } } }, merge);
    const r = await get();
    expect(r.metadata.generation).toBe(2);
    expect(r.status).toMatchObject({ observedGeneration: '2', currentPodHash: stable.status.currentPodHash, replicas: 8, HPAReplicas: 8, phase: 'Healthy' });
    expect(r.metadata.annotations?.['rollout.argoproj.io/revision']).toBe('1');
  });

  it('restartAt: Progressing "rollout is restarting" until pods are replaced, then restartedAt', async () => {
    await deployStable();
    await api().patchNamespacedCustomObject({ ...ROLLOUTS, name: 'checkout', body: { spec: { restartAt: '2026-08-20T09:00:00Z' } } }, merge);
    let r = await get();
    expect(r.status).toMatchObject({ phase: 'Progressing', message: 'rollout is restarting' });
    await clock.advance(10_000);
    r = await get();
    expect(r.status).toMatchObject({ phase: 'Healthy', restartedAt: '2026-08-20T09:00:00Z' });
  });

  it('an image that never pulls stays Progressing at step 0, then Degraded at the progress deadline', async () => {
    await deployStable();
    await setImage('registry.example.com/shop/checkout:does-not-exist');
    await clock.advance(9 * 60_000);
    let r = await get();
    expect(r.status).toMatchObject({ phase: 'Progressing', currentStepIndex: 0 });
    await clock.advance(60_000);
    r = await get();
    expect(r.status.phase).toBe('Degraded');
    expect(r.status.message).toMatch(/^ProgressDeadlineExceeded: ReplicaSet "checkout-[a-z0-9]+" has timed out progressing\.$/);
    expect(r.status.currentStepIndex).toBe(0);
  });

  it('records Kubernetes Events a user can list', async () => {
    await deployStable();
    const list = cluster.store.list(cluster.store.registry.byKind('Event'), 'shop').items;
    expect(list.map((e) => e.reason)).toEqual(expect.arrayContaining(['RolloutUpdated', 'RolloutCompleted']));
  });
});

describe('Argo Rollouts controller simulator: step analysis', () => {
  let outcome: { phase: 'Successful' | 'Failed' | 'Error' | 'Inconclusive'; message?: string } = { phase: 'Successful' };
  let aClock: FakeClock;
  let aCluster: TestCluster;

  beforeEach(async () => {
    aClock = new FakeClock('2026-08-20T09:00:00Z');
    aCluster = await startTestCluster({ clock: aClock, controllers: { rollouts: { podReadyMs: 10_000, analysisMs: 60_000, analysisOutcome: () => outcome } } });
    const rt = aCluster.store.registry.byKind('Rollout');
    aCluster.store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'img:1', steps: [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'success-rate' }] } }, { setWeight: 50 }] }));
    await aClock.advance(0);
    aCluster.store.patch(rt, 'shop', 'checkout', 'merge', { spec: { template: { spec: { containers: [{ name: 'checkout', image: 'img:2' }] } } } });
    await aClock.advance(10_000);
  });
  afterEach(async () => {
    await aCluster.stop();
  });

  const read = () => aCluster.store.get(aCluster.store.registry.byKind('Rollout'), 'shop', 'checkout');

  it('runs an AnalysisRun named <rollout>-<hash>-<revision>-<step>; Successful moves on', async () => {
    outcome = { phase: 'Successful' };
    let r = read();
    const name = `checkout-${r.status.currentPodHash}-2-1`;
    expect(r.status.canary.currentStepAnalysisRunStatus).toEqual({ name, status: 'Running' });
    const run = aCluster.store.get(aCluster.store.registry.byKind('AnalysisRun'), 'shop', name);
    expect(run.metadata.labels).toMatchObject({ 'rollout-type': 'Step', 'step-index': '1' });
    await aClock.advance(60_000);
    r = read();
    expect(r.status.currentStepIndex).toBe(2);
    expect(r.status.canary.currentStepAnalysisRunStatus).toEqual({ name, status: 'Successful' });
  });

  it('a Failed analysis aborts the rollout with the analysis message', async () => {
    outcome = { phase: 'Failed', message: 'metric "success-rate" assessed Failed due to failed (1) > failureLimit (0)' };
    await aClock.advance(60_000);
    const r = read();
    expect(r.status).toMatchObject({ abort: true, phase: 'Degraded', currentStepIndex: 0 });
    expect(r.status.message).toBe(
      'RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase Failed: metric "success-rate" assessed Failed due to failed (1) > failureLimit (0)',
    );
  });

  it('an Inconclusive analysis pauses with InconclusiveAnalysisRun until someone resumes', async () => {
    outcome = { phase: 'Inconclusive' };
    await aClock.advance(60_000);
    let r = read();
    expect(r.status).toMatchObject({ phase: 'Paused', message: 'InconclusiveAnalysisRun', controllerPause: true, currentStepIndex: 1 });
    aCluster.store.patch(aCluster.store.registry.byKind('Rollout'), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' });
    await aClock.advance(0);
    r = read();
    expect(r.status.currentStepIndex).toBe(2);
    expect(r.status.phase).toBe('Progressing');
  });
});
