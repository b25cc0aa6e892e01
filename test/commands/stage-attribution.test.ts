/**
 * Stages often share a namespace (staging and prod both in `shop`). A Rollout named in a command
 * belongs to the stage whose label selector matches it, and only that stage's permissions apply.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configFileSchema } from '../../src/config/file.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { ALICE, CHANNEL, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

const config = configFileSchema.parse({
  clusters: [{ name: 'prod' }],
  pipelines: [
    {
      name: 'checkout',
      channel: CHANNEL,
      stages: [
        { name: 'staging', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app.kubernetes.io/name=checkout,env=staging' }, permissions: { approve: [MALLORY], abort: [MALLORY] } },
        { name: 'prod', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app.kubernetes.io/name=checkout,env=prod' }, permissions: { approve: [ALICE], abort: [ALICE] } },
      ],
    },
  ],
});

let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop'], controllers: { rollouts: { podReadyMs: 5000 } } });
  rig = await startCommandsRig({ clusters: world.clusters, config });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

describe('which stage a Rollout belongs to', () => {
  it('a person allowed in staging may not approve or abort the prod Rollout in the same namespace', async () => {
    const rt = world.store.registry.byKind('Rollout', 'argoproj.io');
    world.store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0', labels: { env: 'prod' } }));
    await clock.advance(0);
    world.store.mutate(rt, 'shop', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
    await clock.advance(6000);
    expect(world.store.get(rt, 'shop', 'checkout').status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });

    const approve = await (await rig.command('approve prod/shop/checkout', MALLORY)).first();
    expect(said(approve)).toContain('you may not approve in checkout@prod: pipelines[0].stages[1].permissions.approve allows U0ALICE');
    const abort = await (await rig.command('abort prod/shop/checkout', MALLORY)).first();
    expect(said(abort)).toContain('you may not abort in checkout@prod');
    const rollout = world.store.get(rt, 'shop', 'checkout');
    expect(rollout.status.pauseConditions).toHaveLength(1);
    expect(rollout.status.abort).toBeFalsy();
    expect(world.server.requestCounts.get('patch rollouts/status')).toBeUndefined();
    const denied = (await rig.auditEntries()).filter((e) => e.actor.slackUserId === MALLORY);
    expect(denied.map((e) => [e.action, e.stage, e.result])).toEqual(expect.arrayContaining([['approve', 'prod', 'denied'], ['abort', 'prod', 'denied']]));

    // The one prod allows does approve it.
    await (await rig.command('approve prod/shop/checkout', ALICE)).first();
    expect(world.store.get(rt, 'shop', 'checkout').status.pauseConditions ?? []).toHaveLength(0);
  });
});
