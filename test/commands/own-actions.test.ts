/**
 * Approve and Abort record what Glidepath itself is about to do, before the patch, so the thread
 * can tell it from a change made outside Glidepath; a click refused before anything changed
 * leaves no record. Signed clicks through the real Bolt app, Redis, and the simulated cluster.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { abortActionKey, resumeActionKey } from '../../src/releases/reduce/own-action-keys.js';
import { OwnActions } from '../../src/releases/store/own-actions.js';
import { ABORT_ACTION_ID, APPROVE_ACTION_ID, encodeButtonValue, type ButtonValue } from '../../src/slack/buttons.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { ALICE, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop', 'argocd'], controllers: { rollouts: { podReadyMs: 5000 } } });
  rig = await startCommandsRig({ clusters: world.clusters });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

const rt = () => world.store.registry.byKind('Rollout', 'argoproj.io');
const TARGET = 'prod/shop/checkout';

async function pausedAtStep1(): Promise<{ g: number; h: string; s: number }> {
  world.store.create(rt(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
  await clock.advance(0);
  world.store.mutate(rt(), 'shop', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
  await clock.advance(6000);
  const r = world.store.get(rt(), 'shop', 'checkout');
  return { g: r.metadata.generation!, h: r.status.currentPodHash, s: 1 };
}

const value = (at: { g: number; h: string; s: number }): ButtonValue => ({ v: 1, p: 'checkout', r: 'rel-1', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', ...at });
const recorded = async () => (await new OwnActions(rig.redis, rig.keys).of([TARGET]))[TARGET] ?? [];

describe('Glidepath records its own actions', () => {
  it('an approval is recorded for the pod hash and step it approved, with who approved', async () => {
    const at = await pausedAtStep1();
    expect(said(await (await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(value(at)), user: ALICE })).first())).toContain('approved step 2');
    expect(await recorded()).toEqual([{ key: resumeActionKey(at.h, 1), user: ALICE }]);
  });

  it('an abort is recorded for the version it aborted', async () => {
    const at = await pausedAtStep1();
    expect(said(await (await rig.click({ actionId: ABORT_ACTION_ID, value: encodeButtonValue(value(at)), user: ALICE })).first())).toContain('aborted prod/shop/checkout');
    expect(await recorded()).toEqual([{ key: abortActionKey(at.h), user: ALICE }]);
  });

  it('a stale click, refused before anything changed, leaves no record', async () => {
    const at = await pausedAtStep1();
    expect(said(await (await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(value({ ...at, s: 0 })), user: ALICE })).first())).toContain('nothing was changed');
    expect(await recorded()).toEqual([]);
  });
});
