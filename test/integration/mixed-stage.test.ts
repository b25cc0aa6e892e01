/**
 * Issue 22 item 3, as a new user configures it: two release-tracked apps in one namespace, one
 * pipeline whose stage selects their shared label, each app released on its own (its own
 * `hangar.io/release-id`), watched by a real Glidepath on the stand-in cluster. Each release's
 * thread completes when its own app is Healthy (it used to wait forever for the other app's
 * Rollout, "1/2 Healthy · 1 not started"), says once that the stage mixes apps and how to split
 * it, and `/glidepath status` shows the line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0MIXED';
const STEPS = [{ setWeight: 50 }, { pause: {} }];
const labelsOf = (app: string) => ({ 'hangar.io/release-tracked': 'true', 'app.kubernetes.io/name': app });

describe('one stage over two apps released on their own', () => {
  let world: WatchedWorld;
  const threadOf = (releaseId: string): TranscriptMessage | undefined => world.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(`Release ${releaseId} `));
  const mixedReplies = (releaseId: string) => (threadOf(releaseId)?.replies ?? []).filter((r) => r.text.includes('mixes apps'));
  /** What the reply says in full (its `text` is the first line, Slack's notification fallback). */
  const said = (m: TranscriptMessage | undefined): string => (m?.blocks ?? []).map((b) => (b as { text?: { text?: string } }).text?.text ?? '').join('\n');
  const statusOf = async (releaseId: string) => (await world.app.store.get('fleet', releaseId))?.status;

  /** Rolls `app` to `releaseId`, approves its one pause as kubectl would, and waits for its thread to complete. */
  async function release(app: string, releaseId: string): Promise<void> {
    world.deploy(app, releaseId, releaseId);
    await world.runFor(3_000);
    await waitFor(async () => (threadOf(releaseId)?.replies ?? []).find((r) => r.text.includes('waits for approval')), `${releaseId} paused`);
    await world.kubectlStatusPatch(app, { pauseConditions: null });
    await world.runFor(3_000);
    await waitFor(async () => ((await statusOf(releaseId)) === 'Complete' ? true : undefined), `${releaseId} complete`);
  }

  beforeAll(async () => {
    world = await startWatchedWorld({
      channel: CHANNEL,
      steps: STEPS,
      pipeline: 'fleet',
      stages: ['{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "hangar.io/release-tracked=true" } }'],
    });
    world.deploy('checkout', '1.0.0', 'checkout-1', labelsOf('checkout'));
    world.deploy('payments', '1.0.0', 'payments-1', labelsOf('payments'));
    await world.runFor(3_000);
    await waitFor(async () => ((await statusOf('payments-1')) === 'Complete' ? true : undefined), 'payments-1 complete');
    await release('checkout', 'checkout-2');
    await release('payments', 'payments-2');
    // More heartbeats of both apps: nothing is said again.
    await world.runFor(3_000);
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  it('each release completes on its own app, and its thread says once which targets run which release and how to split the stage', async () => {
    for (const [releaseId, app, other] of [['checkout-2', 'checkout', 'payments'], ['payments-2', 'payments', 'checkout']] as const) {
      expect(await statusOf(releaseId)).toBe('Complete');
      // Routine replies go out after the ones that need a person, in jobs of their own: wait for both.
      await waitFor(async () => (threadOf(releaseId)?.replies ?? []).find((r) => r.text.includes('is complete')), `${releaseId}: the release-complete reply`);
      await waitFor(async () => mixedReplies(releaseId)[0], `${releaseId}: the mixed-stage reply`);
      // Once, counted when nothing is left to say: a second reply would be in the writer's queue now.
      await world.settled();
      const [reply, ...again] = mixedReplies(releaseId);
      expect(again).toHaveLength(0);
      expect(said(reply)).toContain(`this release (\`${releaseId}\`) runs on \`prod/shop/${app}\``);
      expect(said(reply)).toMatch(new RegExp(`\`${other}-\\d\` runs on \`prod/shop/${other}\``));
      expect(said(reply)).toContain(`selects \`hangar.io/release-tracked=true,app.kubernetes.io/name=${app}\` for this one`);
      // The parent no longer counts the other app's Rollout as "not started", and says the stage mixes apps.
      expect(said(threadOf(releaseId))).not.toContain('not started');
      expect(said(threadOf(releaseId))).toContain('mixes apps: 1 target of other releases not waited for');
    }
  });

  it('/glidepath status shows the stage that mixes apps and how to split it', async () => {
    const sender = new SignedSender({ url: `${world.app.url}/slack/events`, signingSecret: 'watched-world-signing-secret' });
    const responseUrl = world.slack.responseUrl();
    const res = await sender.slashCommand({ command: '/glidepath', text: 'status fleet', userId: 'U0ALICE', channelId: CHANNEL, responseUrl });
    expect(res.status).toBe(200);
    const answer = await waitFor(async () => world.slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), 'the status answer');
    const text = String(answer.body.text);
    expect(text).toContain('prod mixes apps: also `checkout-2` on `prod/shop/checkout`');
    expect(text).toContain('selects `hangar.io/release-tracked=true,app.kubernetes.io/name=payments` for this one');
  });
});
