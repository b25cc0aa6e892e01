/**
 * The grace for an Unhealthy Kargo Stage ends on time: Kargo says nothing more after the Stage
 * turned Unhealthy (its simulator's clock stands still, so no Stage is written again and the
 * watch's resync is minutes away), and the thread still gets the "Degraded" reply when the grace
 * ends, from the release's due-time re-evaluation on the watchdog queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKargoWorld, type KargoWorld } from '../helpers/kargo-world.js';
import { waitFor } from '../helpers/wait.js';

describe('an Unhealthy Kargo Stage after healthy, with nothing more heard', { timeout: 60_000 }, () => {
  let world: KargoWorld;
  beforeAll(async () => {
    // 3 s of grace, in real time: the watchdog queue's delayed jobs run on the wall clock.
    world = await startKargoWorld({ unhealthyGraceMinutes: 0.05 });
    world.stage({ name: 'dev' });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('is reported when its grace ends, not at the next fact', async () => {
    const replies = () => (world.thread('rel-g1')?.replies ?? []).map((r) => world.parentText(r));
    const freight = world.freight('5.0.0', 'steady-yak', { 'hangar.io/release-id': 'rel-g1' });
    await world.promote('dev', freight);
    await world.until('dev healthy', () => replies().some((t) => t.includes('*dev* is Healthy')));
    world.appHealth('dev', 'Degraded');
    await world.until('the row says Unhealthy', () => world.parentText(world.thread('rel-g1')!).includes('kargo-checkout/dev — Degraded: Stage Unhealthy'));
    expect(replies().some((t) => t.includes('is Degraded'))).toBe(false);
    const stageVersions = () => JSON.stringify(world.cluster.store.list(world.cluster.store.registry.byKind('Stage', 'kargo.akuity.io'), 'kargo-checkout').items.map((s) => s.metadata.resourceVersion));
    const before = stageVersions();
    // From here the cluster's clock stands still: Kargo writes nothing, the watch delivers nothing.
    const reply = await waitFor(async () => replies().find((t) => t.includes('`prod/kargo-checkout/dev` is Degraded')), 'the degraded reply at the end of the grace');
    expect(reply).toContain('Stage Unhealthy');
    expect(stageVersions()).toBe(before);
  });
});
