/**
 * One thread per release when a person promotes from Slack (issue #11): on a watched cluster
 * (`facts: watch`) `/glidepath promote` and the Promote button of a healthy stage open no thread of
 * their own and post no phase lines; the answer says the promotion is followed in the release thread
 * of its Freight, where the watch shows it (a classic Stage's Promotion, a target-aware Stage's
 * PromotionRequest through Kargo's API). What Slack received is read from the Slack stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { ResponseUrlPost } from '../../sandbox/slack/transcript.js';
import { PROMOTE_ACTION_ID } from '../../src/slack/buttons.js';
import { KARGO_CHANNEL, PROJECT, startKargoWorld, type KargoWorld } from '../helpers/kargo-world.js';
import { waitFor } from '../helpers/wait.js';

const ALICE = 'U0ALICE';
const perms = `permissions: { promote: [${ALICE}] }`;

describe('a promotion from Slack on a watched cluster is followed in its release thread only', { timeout: 60_000 }, () => {
  let world: KargoWorld;
  let sender: SignedSender;
  const replies = (releaseId: string) => (world.thread(releaseId)?.replies ?? []).map((r) => world.parentText(r));
  const everything = () => JSON.stringify(world.slack.transcript.messages(KARGO_CHANNEL));
  const answered = (url: string) => waitFor(async () => world.slack.transcript.responses.find((r: ResponseUrlPost) => url.endsWith(r.id)), `an answer at ${url}`);
  const said = (r: ResponseUrlPost) => String(r.body.text ?? '');

  beforeAll(async () => {
    world = await startKargoWorld({
      kargoApi: true,
      stages: [`{ name: dev, cluster: prod, kargo: { project: ${PROJECT}, stage: dev }, ${perms} }`, `{ name: fleet, cluster: prod, kargo: { project: ${PROJECT}, stage: fleet }, ${perms} }`],
    });
    world.stage({ name: 'dev' });
    world.stage({ name: 'fleet', upstream: ['dev'], targets: [{ fleet: 'shop' }] });
    world.target('eu-1', { fleet: 'shop' });
    sender = new SignedSender({ url: `${world.app.url}/slack/events`, signingSecret: 'watched-world-signing-secret' });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('/glidepath promote answers where it is followed; the Promote button answers in the thread; one thread, no phase lines', async () => {
    const freight = world.freight('5.0.0', 'brave-lynx', { 'hangar.io/release-id': 'rel-p1' });
    const url = world.slack.responseUrl();
    const res = await sender.slashCommand({ command: '/glidepath', text: 'promote checkout-kargo@dev --freight brave-lynx', userId: ALICE, channelId: KARGO_CHANNEL, responseUrl: url });
    expect(res.status).toBe(200);
    const answer = said(await answered(url));
    const promotion = world.cluster.store.list(world.cluster.store.registry.byKind('Promotion', 'kargo.akuity.io'), PROJECT).items[0]!.metadata.name;
    expect(answer).toBe(
      `\`dev\`: :white_check_mark: created Promotion ${promotion} of brave-lynx (Freight ${freight.slice(0, 7)}) to prod/${PROJECT}/dev; followed in the release thread of brave-lynx (Freight ${freight.slice(0, 7)}) (it opens as the Promotion starts)`,
    );

    const healthy = await world.until('dev healthy in rel-p1', () => world.thread('rel-p1')?.replies.find((r) => r.text.includes('*dev* is Healthy')));
    // The reply and the parent's edit are jobs of their own: either may reach Slack first.
    const parent = await world.until('the parent shows dev Healthy', () => {
      const m = world.thread('rel-p1');
      return m && world.parentText(m).includes('• kargo-checkout/dev — Healthy') && m;
    });
    // The Promotion shows in the release thread (from the watch), and nowhere else.
    expect(world.parentText(parent)).toContain('• kargo-checkout/dev — Healthy · Freight *brave-lynx* (`checkout:5.0.0`) · Promotion Succeeded by kubernetes:glidepath');
    expect(world.slack.transcript.messages(KARGO_CHANNEL)).toHaveLength(1);
    expect(everything()).not.toContain('following its phase');
    expect(everything()).not.toContain('is Succeeded');

    // The Promote button of dev's healthy reply, clicked in the release thread: fleet is target-aware (Kargo's API).
    const value = (healthy.blocks as { type: string; elements?: { action_id?: string; value?: string }[] }[]).flatMap((b) => b.elements ?? []).find((e) => e.action_id === PROMOTE_ACTION_ID)!.value!;
    const clickUrl = world.slack.responseUrl();
    const click = await sender.blockAction({ actionId: PROMOTE_ACTION_ID, value, userId: ALICE, channelId: KARGO_CHANNEL, messageTs: healthy.ts, threadTs: parent.ts, responseUrl: clickUrl, messageText: healthy.text, messageBlocks: healthy.blocks });
    expect(click.status).toBe(200);
    const clicked = said(await answered(clickUrl));
    expect(clicked).toMatch(new RegExp(`^\`fleet\`: :white_check_mark: created PromotionRequest fleet\\.[0-9a-z]{26}\\.${freight.slice(0, 7)} of brave-lynx \\(Freight ${freight.slice(0, 7)}\\) to prod/${PROJECT}/fleet through Kargo's API \\(the Stage selects Targets; Kargo promotes to its 1 Target\\); followed in the release thread of brave-lynx \\(Freight ${freight.slice(0, 7)}\\) \\(this thread\\)$`));

    await world.until('fleet healthy in rel-p1', () => replies('rel-p1').some((t) => t.includes('*fleet* is Healthy')));
    await world.until('rel-p1 complete', () => replies('rel-p1').some((t) => t.includes('is complete')));
    // The parent's edit is a job of its own: it may land after the reply.
    await world.until('the parent shows fleet Healthy', () => world.parentText(world.thread('rel-p1')!).includes('• kargo-checkout/fleet — Healthy'));
    expect(world.parentText(world.thread('rel-p1')!)).toContain('• kargo-checkout/fleet — Healthy · Freight *brave-lynx* (`checkout:5.0.0`) · PromotionRequest Succeeded');
    expect(world.slack.transcript.messages(KARGO_CHANNEL)).toHaveLength(1);
    expect(everything()).not.toContain('following its phase');
    expect(everything()).not.toMatch(/is (Running|Succeeded|Pending)/);
  });

  it('a second promote of a Freight whose release thread exists names that release', async () => {
    const url = world.slack.responseUrl();
    await sender.slashCommand({ command: '/glidepath', text: 'promote checkout-kargo@dev --freight brave-lynx', userId: ALICE, channelId: KARGO_CHANNEL, responseUrl: url });
    const answer = said(await answered(url));
    // dev runs brave-lynx already: Kargo promotes it again (a re-promotion), followed where it was.
    expect(answer).toMatch(/; followed in the release thread of brave-lynx \(Freight [0-9a-f]{7}\) \(release `rel-p1`\)$/);
    expect(world.slack.transcript.messages(KARGO_CHANNEL)).toHaveLength(1);
  });
});
