import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { abortRollout, approveCanaryStep, retryRollout } from '../../src/kube/rollout-operations.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { RolloutsController } from '../../sandbox/kube/controllers/rollouts.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { completed, failure, pausedAtStep1, refusal, startKubeWorld, type KubeWorld } from './support.js';

let clock: FakeClock;
let world: KubeWorld;
let controller: RolloutsController;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, controllers: { rollouts: { podReadyMs: 5000 } } });
  controller = world.standIn.rollouts!;
});
afterEach(async () => {
  await world.close();
});

const rt = () => world.store.registry.byKind('Rollout', 'argoproj.io');
const live = (): KubeObject => world.store.get(rt(), 'shop', 'checkout');
const api = () => world.clusters.api('prod');

describe('approveCanaryStep', () => {
  it('clears the pause exactly as kubectl argo rollouts promote does, with the resourceVersion it read, and the canary moves on', async () => {
    const expected = await pausedAtStep1(world, clock);
    const rvBefore = live().metadata.resourceVersion;
    const result = await completed(approveCanaryStep(api(), 'shop', 'checkout', expected));
    expect(result.patches).toEqual([{ subresource: 'status', body: { metadata: { resourceVersion: rvBefore }, status: { pauseConditions: null } } }]);
    expect(result.before).toMatchObject({ phase: 'Paused', step: { index: 1 } });
    expect(result.after.pause).toBeUndefined();
    expect(world.server.requestCounts.get('patch rollouts/status')).toBe(1);
    expect(world.server.requestCounts.get('patch rollouts')).toBeUndefined();
    await clock.advance(6000);
    expect(live().status.currentStepIndex).toBe(3);
  });

  it('also unpauses spec.paused when the Rollout was paused by hand', async () => {
    const expected = await pausedAtStep1(world, clock);
    world.store.patch(rt(), 'shop', 'checkout', 'merge', { spec: { paused: true } });
    await clock.advance(0);
    const result = await completed(approveCanaryStep(api(), 'shop', 'checkout', { ...expected, generation: live().metadata.generation! }));
    expect(result.patches.map((p) => [p.subresource ?? 'spec', p.body])).toEqual([
      ['status', expect.objectContaining({ status: { pauseConditions: null } })],
      ['spec', expect.objectContaining({ spec: { paused: false } })],
    ]);
    expect(live().spec.paused).toBe(false);
  });

  it('when the controller writes between the two halves, the spec half is written again on the same version, not given up', async () => {
    const expected = await pausedAtStep1(world, clock);
    world.store.patch(rt(), 'shop', 'checkout', 'merge', { spec: { paused: true } });
    await clock.advance(0);
    let raced = false;
    world.server.onRequest = (req) => {
      if (raced || req.verb !== 'patch' || req.resource !== 'rollouts') return;
      raced = true;
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { message: 'manually paused (reconciled)' } }, { subresource: 'status' });
    };
    const result = await completed(approveCanaryStep(api(), 'shop', 'checkout', { ...expected, generation: live().metadata.generation! }));
    expect(raced).toBe(true);
    expect(world.server.requestCounts.get('patch rollouts')).toBe(2);
    expect(result.patches.map((p) => p.subresource ?? 'spec')).toEqual(['status', 'spec']);
    expect(live().spec.paused).toBe(false);
  });

  it('refuses a stale click with what changed, and changes nothing', async () => {
    const expected = await pausedAtStep1(world, clock);
    const err = await refusal(approveCanaryStep(api(), 'shop', 'checkout', { ...expected, stepIndex: 0 }));
    expect(err.kind).toBe('refused');
    expect(err.reason).toBe('checkout moved from step 1 to step 2 since the button was shown; nothing was changed');
    expect(err.details).toMatchObject({ why: 'changed', before: { phase: 'Paused', step: { index: 1 } } });
    const other = await refusal(approveCanaryStep(api(), 'shop', 'checkout', { ...expected, podHash: 'abc123' }));
    expect(other.reason).toContain(`checkout is now rolling out a different version (pod hash abc123 → ${expected.podHash})`);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBeUndefined();
    expect(live().status.pauseConditions).toHaveLength(1);
  });

  it('refuses when the Rollout is no longer paused at that step (someone else approved it first)', async () => {
    const expected = await pausedAtStep1(world, clock);
    // Another person's promote, not yet acted on by the controller: same step, no pause condition.
    controller.stop();
    world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' });
    const err = await refusal(approveCanaryStep(api(), 'shop', 'checkout', expected));
    expect(err.kind).toBe('refused');
    expect(err.reason).toBe('checkout is not paused at step 2: it is Progressing (waiting for rollout to unpause); nothing was changed');
    expect(live().status.currentStepIndex).toBe(1);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBeUndefined();
  });

  it('a change between its read and its write is a 409 explained in the words of the button, never a skipped step', async () => {
    const expected = await pausedAtStep1(world, clock);
    let raced = false;
    world.server.onRequest = (req) => {
      if (raced || req.verb !== 'patch' || req.resource !== 'rollouts/status') return;
      raced = true;
      // Someone else promotes first (the same patch kubectl sends); the controller moves on.
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' });
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { currentStepIndex: 2, controllerPause: false } }, { subresource: 'status' });
    };
    const err = await failure(approveCanaryStep(api(), 'shop', 'checkout', expected));
    expect(err.kind).toBe('conflict');
    expect(err.status).toBe(409);
    expect(err.message).toBe('checkout moved from step 2 to step 3 while you clicked; nothing was changed');
    expect(live().status.currentStepIndex).toBe(2);
  });

  it('a write between its read and its write that changed nothing approved (a status timestamp) is retried once: the pause is cleared', async () => {
    const expected = await pausedAtStep1(world, clock);
    let raced = false;
    world.server.onRequest = (req) => {
      if (raced || req.verb !== 'patch' || req.resource !== 'rollouts/status') return;
      raced = true;
      // The controller rewrites a condition: a new resourceVersion, the same step, still paused.
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { message: 'still paused' } }, { subresource: 'status' });
    };
    const result = await completed(approveCanaryStep(api(), 'shop', 'checkout', expected));
    expect(raced).toBe(true);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBe(2);
    expect(result.patches).toHaveLength(1);
    expect(result.after.pause).toBeUndefined();
    await clock.advance(6000);
    expect(live().status.currentStepIndex).toBe(3);
  });

  it('names a missing RBAC rule clearly (403)', async () => {
    const expected = await pausedAtStep1(world, clock);
    const err = await failure(approveCanaryStep(world.clusters.api('prod-no-status'), 'shop', 'checkout', expected));
    expect(err.kind).toBe('forbidden');
    expect(err.status).toBe(403);
    expect(err.message).toBe(
      "Glidepath's service account may not patch rollouts/status in prod-no-status/shop; nothing was changed: add the rule from deploy/rbac/glidepath-clusterrole.yaml",
    );
  });

  it('a missing Rollout is named', async () => {
    const err = await failure(approveCanaryStep(api(), 'shop', 'cart', { generation: 1, podHash: 'x', stepIndex: 1 }));
    expect(err.kind).toBe('not-found');
    expect(err.message).toContain('cart (rollouts) was not found in prod/shop');
  });
});

describe('abortRollout and retryRollout', () => {
  it('abort writes status.abort=true on the status subresource; retry writes abort=false; each is refused when Argo CD would not offer it', async () => {
    const { podHash } = await pausedAtStep1(world, clock);
    const aborted = await completed(abortRollout(api(), 'shop', 'checkout', { podHash }));
    expect(aborted.patches).toEqual([{ subresource: 'status', body: { metadata: { resourceVersion: expect.any(String) }, status: { abort: true } } }]);
    await clock.advance(0);
    expect(live().status).toMatchObject({ abort: true, phase: 'Degraded' });
    const again = await refusal(abortRollout(api(), 'shop', 'checkout'));
    expect(again.reason).toBe('checkout cannot be aborted: it is already aborted; nothing was changed');

    const retried = await completed(retryRollout(api(), 'shop', 'checkout', { podHash }));
    expect(retried.patches[0]!.body).toMatchObject({ status: { abort: false } });
    await clock.advance(0);
    expect(live().status.abort).toBeFalsy();
  });

  it('an abort is not lost to a controller writing the status meanwhile (a failing canary does, constantly): read again and abort', async () => {
    const { podHash } = await pausedAtStep1(world, clock);
    let raced = 0;
    world.server.onRequest = (req) => {
      if (raced >= 2 || req.verb !== 'patch' || req.resource !== 'rollouts/status') return;
      raced += 1;
      // The controller's own status write (a new message), between Glidepath's read and its patch.
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { message: `reconciled ${raced}` } }, { subresource: 'status' });
    };
    const aborted = await completed(abortRollout(api(), 'shop', 'checkout', { podHash }));
    expect(raced).toBe(2);
    expect(aborted.after.aborted).toBe(true);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBe(3);
  });

  it('refuses to abort a fully promoted Rollout', async () => {
    world.store.create(rt(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
    await clock.advance(0);
    const err = await refusal(abortRollout(api(), 'shop', 'checkout'));
    expect(err.kind).toBe('refused');
    expect(err.reason).toBe('checkout cannot be aborted: it is fully promoted: there is nothing to abort; nothing was changed');
  });
});
