/**
 * `/glidepath reject` of a RollingSync step and of promotions to a Kargo Stage (issue 23 item 4):
 * permission-gated as approving the same thing is, nothing is synced or created while it stands,
 * the reason is bounded, and an approval or promote afterwards goes through saying whose rejection
 * it overrides. The Argo CD / ApplicationSet simulators and the stand-in API server with Kargo's
 * admission webhook, real Bolt, the Slack stand-in, real Redis.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { ALICE, BOB, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { startArgoWorld, REPO } from '../kube/argo-world.js';

const NS = 'kargo-demo';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
let world: KubeWorld;
let rig: CommandsRig;
let clock: FakeClock;

describe('reject a RollingSync step', () => {
  it('the step is not synced while the rejection stands; an approval afterwards syncs it and says whose rejection it overrides', async () => {
    const w = await startArgoWorld({ staleCache: false, maxUpdate: [undefined, undefined, 0] });
    const appRig = await startCommandsRig({ clusters: w.clusters, now: () => w.clock.now(), followTimeoutMs: 60_000 });
    try {
      await w.clock.advance(150_000);
      const sha = w.git.resolve(REPO, 'main')!;
      const rejected = await (await appRig.command('reject prod/argocd/checkout canary error budget is spent')).first();
      expect(said(rejected)).toContain(`rejected (approve RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)}): “canary error budget is spent”`);
      expect(w.app('checkout-prod').operation).toBeUndefined();
      expect(w.server.writes.filter((x) => x.resource.startsWith('applications'))).toEqual([]);

      const approved = await (await appRig.command('approve checkout@rolling', BOB)).first();
      expect(said(approved)).toContain('syncing checkout-prod');
      expect(said(approved)).toContain(`this overrides the rejection by <@${ALICE}>: “canary error budget is spent”`);
      expect(w.app('checkout-prod').operation).toMatchObject({ sync: { revision: sha } });
    } finally {
      await appRig.close();
      await w.stop();
    }
  });
});

describe('reject promotions to a Kargo stage', () => {
  beforeEach(async () => {
    clock = new FakeClock('2026-08-20T12:00:00Z');
    world = await startKubeWorld({ clock });
    const kargo = kargoObjects(world.store, NS);
    kargo.stage('dev', { direct: true });
    kargo.stage('staging', { stages: ['dev'] });
    kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' } } });
    rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now() });
  });
  afterEach(async () => {
    await rig.close();
    await world.close();
  });

  const promotions = () => world.store.list(world.store.registry.byKind('Promotion', 'kargo.akuity.io'), NS).items;

  it('holds them with a reason, permission-gated and audited; a promote afterwards says it overrides the rejection, by whom', async () => {
    const refused = await (await rig.command('reject shop@staging the Freight breaks checkout', MALLORY)).first();
    expect(said(refused)).toMatch(/^:no_entry: Not allowed: you may not promote in shop@staging/);

    const rejected = await (await rig.command('reject shop@staging "the Freight breaks checkout <!here>"')).first();
    expect(said(rejected)).toContain('rejected (promote to prod/kargo-demo/staging): “the Freight breaks checkout &lt;!here&gt;”');
    expect(said(rejected)).not.toContain('<!here>');
    expect(promotions()).toEqual([]);

    const promoted = await (await rig.command('promote shop@staging')).first();
    expect(promotions()).toHaveLength(1);
    expect(said(promoted)).toContain(`this overrides the rejection by <@${ALICE}>: “the Freight breaks checkout &lt;!here&gt;”`);

    const entries = await rig.auditEntries();
    expect(entries.map((e) => [e.action, e.actor.slackUserId, e.result])).toEqual([
      ['promote', ALICE, 'done'],
      ['reject', ALICE, 'done'],
      ['reject', MALLORY, 'denied'],
    ]);
    expect(entries[1]).toMatchObject({ requestReason: 'the Freight breaks checkout <!here>', target: 'prod/kargo-demo/staging' });
    expect(entries[0]!.gates?.find((g) => g.gate === 'rejection')).toMatchObject({ overrides: { by: ALICE, reason: 'the Freight breaks checkout <!here>' } });

    // Overridden: the next promote has nothing to override.
    const again = await (await rig.command('promote shop@staging')).first();
    expect(said(again)).not.toContain('overrides the rejection');
  });

  it('refuses a reason over 500 characters with its length, and holds nothing', async () => {
    const answer = await (await rig.command(`reject shop@staging ${'x'.repeat(501)}`)).first();
    expect(said(answer)).toContain('the reason is 501 characters; keep it to 500');
    expect(await rig.auditEntries()).toEqual([]);
  });
});
