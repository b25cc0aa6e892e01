/**
 * A target-aware Kargo Stage (Kargo main, `spec.targets`) followed in the release thread with
 * notifications off: dev is a classic Stage (a Promotion), fleet selects two Targets and is
 * promoted through Kargo's API (the stand-in over real HTTP), whose PromotionRequest the simulated
 * reconciler fans out as one child Promotion per Target. The thread shows the PromotionRequest's
 * phase and Freight as it runs, the Stage healthy once it ended; a Target that fails turns into a
 * failure reply naming the PromotionRequest, its phase, the Target and its child Promotion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { PROJECT, startKargoWorld, type KargoWorld } from '../helpers/kargo-world.js';
import { waitFor } from '../helpers/wait.js';

describe('a target-aware Kargo Stage in the release thread', { timeout: 60_000 }, () => {
  let world: KargoWorld;
  let failing = '';
  const replies = (m: TranscriptMessage | undefined) => (m?.replies ?? []).map((r) => world.parentText(r));
  const fleetRow = (releaseId: string) => world.parentText(world.thread(releaseId)!).split('\n').find((l) => l.startsWith('• kargo-checkout/fleet')) ?? '';
  const kargo = (kind: string): KubeObject[] => world.cluster.store.list(world.cluster.store.registry.byKind(kind, 'kargo.akuity.io'), PROJECT).items;

  beforeAll(async () => {
    world = await startKargoWorld({
      kargoApi: true,
      stages: [`{ name: dev, cluster: prod, kargo: { project: ${PROJECT}, stage: dev } }`, `{ name: fleet, cluster: prod, kargo: { project: ${PROJECT}, stage: fleet } }`],
      kargo: { faults: { fail: (p) => (p.spec.target === 'us-1' && p.spec.freight === failing ? { phase: 'Failed', message: 'remote rejected: us-1 is frozen', atStep: 'update-image' } : undefined) } },
    });
    world.stage({ name: 'dev' });
    world.stage({ name: 'fleet', upstream: ['dev'], targets: [{ fleet: 'shop' }] });
    world.target('eu-1', { fleet: 'shop' });
    world.target('us-1', { fleet: 'shop' });
    world.target('lab', { fleet: 'lab' });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  /** dev (classic) promoted and healthy, so the Freight is available to fleet. */
  async function throughDev(tag: string, alias: string, releaseId: string): Promise<string> {
    const freight = world.freight(tag, alias, { 'hangar.io/release-id': releaseId });
    await world.promote('dev', freight);
    await world.until(`${releaseId} dev healthy`, () => replies(world.thread(releaseId)).some((t) => t.includes('*dev* is Healthy')));
    return freight;
  }

  it('shows the PromotionRequest running (phase, Freight) until the Stage is healthy, then the release is Complete', async () => {
    const freight = await throughDev('4.0.0', 'tidy-tapir', 'rel-t1');
    const name = await world.promoteThroughApi('fleet', freight);
    expect(kargo('PromotionRequest').find((r) => r.metadata.name === name)?.spec).toEqual({ stage: 'fleet', freight, targets: [{ name: 'eu-1' }, { name: 'us-1' }] });
    // The cluster's clock stands still: the PromotionRequest stays Running at its first child's first step.
    const running = await waitFor(async () => fleetRow('rel-t1').includes('PromotionRequest Running') && fleetRow('rel-t1'), 'the fleet row while the PromotionRequest runs');
    expect(running).toBe('• kargo-checkout/fleet — Progressing: PromotionRequest Running · Freight *tidy-tapir* (`checkout:4.0.0`)');
    expect(world.parentText(world.thread('rel-t1')!)).not.toContain('*Complete*');

    const healthy = await world.until('fleet healthy', () => replies(world.thread('rel-t1')).find((t) => t.includes('*fleet* is Healthy')));
    expect(healthy).toBe(':white_check_mark: *fleet* is Healthy for this release.');
    await world.until('rel-t1 complete', () => replies(world.thread('rel-t1')).some((t) => t.includes('is complete')));
    // The parent's edit is a job of its own: it may land after the reply.
    await world.until('the parent reads Complete', () => world.parentText(world.thread('rel-t1')!).includes(':white_check_mark: *Complete*'));
    const parent = world.parentText(world.thread('rel-t1')!);
    expect(parent).toContain(':white_check_mark: *Complete*');
    expect(fleetRow('rel-t1')).toBe('• kargo-checkout/fleet — Healthy · Freight *tidy-tapir* (`checkout:4.0.0`) · PromotionRequest Succeeded');
    // Both kinds in one thread: dev's row still names its Promotion and who asked.
    expect(parent).toContain('• kargo-checkout/dev — Healthy · Freight *tidy-tapir* (`checkout:4.0.0`) · Promotion Succeeded by kubernetes:admin');
    // Kargo fanned the Freight out as one child Promotion per Target; none of them shows as a Promotion of its own.
    expect(kargo('Promotion').filter((p) => p.spec.freight === freight && p.spec.target).map((p) => p.spec.target).sort()).toEqual(['eu-1', 'us-1']);
    expect(parent).not.toMatch(/fleet\.(eu|us)-1\./);
    expect(replies(world.thread('rel-t1')).filter((t) => t.startsWith(':x:'))).toEqual([]);
  });

  it('a Target that fails: the reply names the PromotionRequest, its phase, the Target and its child Promotion with the step and message', async () => {
    failing = await throughDev('4.1.0', 'grim-gnu', 'rel-t2');
    const name = await world.promoteThroughApi('fleet', failing);
    const reply = await world.until('the promotion-failed reply', () => replies(world.thread('rel-t2')).find((t) => t.includes('the Kargo PromotionRequest')));
    const child = kargo('Promotion').find((p) => p.spec.freight === failing && p.spec.target === 'us-1')!.metadata.name;
    expect(kargo('PromotionRequest').find((r) => r.metadata.name === name)?.status).toMatchObject({ phase: 'Failed', summary: { succeeded: 1, failed: 1 } });
    expect(reply).toBe(
      `:x: *fleet* — \`prod/kargo-checkout/fleet\`: the Kargo PromotionRequest \`${name}\` failed (phase Failed): Target \`us-1\` (child Promotion \`${child}\`) failed at step \`update-image\`.\n>remote rejected: us-1 is frozen`,
    );
    await world.until('rel-t2 failed', () => world.parentText(world.thread('rel-t2')!).includes(':x: *Failed*'));
    expect(fleetRow('rel-t2')).toBe('• kargo-checkout/fleet — Degraded: PromotionRequest Failed · Target us-1 Failed at step update-image: remote rejected: us-1 is frozen · Freight *grim-gnu* (`checkout:4.1.0`)');
    expect(replies(world.thread('rel-t2')).filter((t) => t.includes('the Kargo'))).toHaveLength(1);
  });
});
