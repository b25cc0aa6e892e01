/**
 * The stall reply on a Kargo release, as Slack receives it (notifications off, `facts: watch`): a
 * release whose next step is a person's promotion, silent for longer than the stall (the watch's
 * relist is far away here), says what may really be wrong for its source (Glidepath's watch of the
 * cluster, Kargo's controller), never lost Rollouts notifications, and that it waits for a
 * promotion besides.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKargoWorld, type KargoWorld } from '../helpers/kargo-world.js';
import { waitFor } from '../helpers/wait.js';

describe('a silent Kargo release waiting for a promotion', { timeout: 60_000 }, () => {
  let world: KargoWorld;

  beforeAll(async () => {
    // A stall after 1.5 s of silence; the watch relists every 10 min, so nothing else is heard.
    world = await startKargoWorld({ settings: 'stallAfterMinutes: 0.025' });
    world.stage({ name: 'dev' });
    world.stage({ name: 'staging', upstream: ['dev'] });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('says the watch of the cluster may be down or Kargo not reconciling, and that the release waits for a promotion to staging', async () => {
    const freight = world.freight('6.0.0', 'calm-koala', { 'hangar.io/release-id': 'rel-s1' });
    await world.promote('dev', freight);
    await world.until('dev healthy', () => world.thread('rel-s1')?.replies.some((r) => r.text.includes('*dev* is Healthy')));
    const stall = await waitFor(async () => world.thread('rel-s1')?.replies.find((r) => r.text.includes('No fact from')), 'the stall reply');
    expect(world.parentText(stall).replace(/<!date\^[^>]+>/, 'DATE')).toMatch(
      /^:warning: No fact from \*checkout-kargo\* for (under a minute|\d+ min) \(silent since DATE\); Glidepath's watch of cluster `prod` may be down \(a working watch hears every object it follows at each relist\), or Kargo's controller is not reconciling\. The release also waits for a person \(the next step is a promotion to \*staging\*\); that wait is not what this alert is about\.$/,
    );
    expect(JSON.stringify(world.slack.transcript.messages('C0KARGO'))).not.toContain('notifications may have been lost');
  });
});
