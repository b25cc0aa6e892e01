/**
 * The thread matches the cluster: two Rollouts of one release wait for approval; one is resumed
 * and the other aborted outside Glidepath, as kubectl does it (a merge patch of the status
 * subresource, sent by client-node to the stand-in API server as an admin). Glidepath watches
 * the cluster, so the thread says what happened, and the Approve/Abort buttons of the replies
 * that asked are gone from Slack (the stand-in keeps every message and its edits).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0TRUTH';
const STEPS = [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }];

describe('the thread says what was done outside Glidepath', () => {
  let world: WatchedWorld;
  const runFor = (ms: number) => world.runFor(ms);
  const kubectlStatusPatch = (name: string, status: Record<string, unknown>) => world.kubectlStatusPatch(name, status);
  const replies = (): TranscriptMessage[] => world.replies();
  const replyTo = (name: string, needle: string) => replies().find((r) => r.text.includes(`prod/shop/${name}`) && r.text.includes(needle));
  const hasButtons = (m: TranscriptMessage) => m.blocks.some((b) => (b as { type?: string }).type === 'actions');
  const blockText = (m: TranscriptMessage) => JSON.stringify(m.blocks);

  beforeAll(async () => {
    world = await startWatchedWorld({ channel: CHANNEL, steps: STEPS });
    for (const name of ['checkout', 'cart']) world.deploy(name, '1.0.0', 'rel-1');
    await runFor(5_000);
    await waitFor(async () => (await world.app.store.get('shop', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    for (const name of ['checkout', 'cart']) world.deploy(name, '2.0.0', 'rel-2');
    await runFor(5_000);
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('a Rollout resumed with kubectl: the thread says "resumed outside Glidepath" and the paused reply has no buttons left', async () => {
    const paused = await waitFor(async () => replyTo('checkout', 'waits for approval'), 'checkout paused reply');
    expect(hasButtons(paused)).toBe(true);
    await kubectlStatusPatch('checkout', { pauseConditions: null });
    await runFor(3_000);
    const said = await waitFor(async () => replyTo('checkout', 'resumed outside Glidepath'), '"resumed outside Glidepath" reply');
    expect(said.text).toContain('(step 2/3)');
    const settled = await waitFor(async () => {
      const now = replyTo('checkout', 'waits for approval');
      return now && !hasButtons(now) ? now : undefined;
    }, 'the paused reply without buttons');
    expect(blockText(settled)).toContain('Resumed outside Glidepath; these buttons are gone.');
    expect(settled.edits.length).toBeGreaterThan(0);
    // Each thing said once.
    expect(replies().filter((r) => r.text.includes('prod/shop/checkout') && r.text.includes('resumed outside Glidepath')).length).toBe(1);
  }, 30_000);

  it('a Rollout aborted with kubectl: the thread says "aborted outside Glidepath" and the paused reply has no buttons left', async () => {
    const paused = await waitFor(async () => replyTo('cart', 'waits for approval'), 'cart paused reply');
    expect(hasButtons(paused)).toBe(true);
    await kubectlStatusPatch('cart', { abort: true });
    await runFor(3_000);
    const said = await waitFor(async () => replyTo('cart', 'was aborted outside Glidepath'), '"aborted outside Glidepath" reply');
    expect(said.text).toContain('traffic went back to the stable version');
    const settled = await waitFor(async () => {
      const now = replyTo('cart', 'waits for approval');
      return now && !hasButtons(now) ? now : undefined;
    }, 'the paused reply without buttons');
    expect(blockText(settled)).toContain('Aborted outside Glidepath; these buttons are gone.');
    // Each thing said once.
    expect(replies().filter((r) => r.text.includes('prod/shop/cart') && r.text.includes('aborted')).length).toBe(1);
  }, 30_000);
});
