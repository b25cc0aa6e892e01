/**
 * Issue 23 item 4, as a team lives it: a canary pauses, Alice clicks Reject in the thread, says
 * why in the dialog, and the step is held (nothing is patched): the thread and the parent message
 * say who rejected it and why, the audit names the reason. Glidepath restarts; the new process
 * still knows the rejection, and Bob's Approve goes through saying it overrides Alice's. A typed
 * reject without a reason is answered with the usage. Real Glidepath watching the stand-in
 * cluster, Slack stand-in, signed clicks through Bolt, real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { APPROVE_ACTION_ID, REJECT_ACTION_ID, REJECT_REASON_ACTION_ID, REJECT_REASON_BLOCK_ID } from '../../src/slack/buttons.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0REJECT';
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const SECRET = 'watched-world-signing-secret';
// A person's words: a mention that must ping nobody, and markup that must stay text.
const REASON = 'p99 latency doubled at 50% <!channel> see <https://evil.example|grafana>';

describe('reject a step with a reason', () => {
  let world: WatchedWorld;
  const sender = () => new SignedSender({ url: `${world.app.url}/slack/events`, signingSecret: SECRET });
  const threadOf = (releaseId: string): TranscriptMessage | undefined => world.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(`Release ${releaseId} `));
  /** What a message says in full (its `text` is only the notification fallback). */
  const said = (m: TranscriptMessage | undefined): string => [m?.text ?? '', ...(m?.blocks ?? []).map((b) => JSON.stringify(b))].join('\n');
  const replies = () => threadOf('rel-2')?.replies ?? [];
  const pausedReply = () => replies().find((r) => r.text.includes('waits for approval'));
  const buttonOf = (actionId: string) =>
    (pausedReply()?.blocks ?? []).flatMap((b) => ((b as { elements?: { action_id?: string; value?: string }[] }).elements ?? [])).find((e) => e.action_id === actionId);
  const rolloutWrites = () => world.cluster.server.writes.filter((w) => w.resource.startsWith('rollouts') && w.verb === 'patch');
  const audit = async () => world.app.slack!.commands!.audit.list({ limit: 50 });

  async function answerTo(send: (responseUrl: string) => Promise<{ status: number }>): Promise<string> {
    const responseUrl = world.slack.responseUrl();
    expect((await send(responseUrl)).status).toBe(200);
    const answer = await waitFor(async () => world.slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), 'the answer');
    return String(answer.body.text ?? '');
  }

  beforeAll(async () => {
    world = await startWatchedWorld({
      channel: CHANNEL,
      steps: [{ setWeight: 50 }, { pause: {} }],
      stages: [`{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=prod" }, permissions: { approve: [${ALICE}, ${BOB}] } }`],
    });
    world.deploy('checkout', '1.0.0', 'rel-1');
    await world.runFor(3_000);
    await waitFor(async () => ((await world.app.store.get('shop', 'rel-1'))?.status === 'Complete' ? true : undefined), 'rel-1 complete');
    world.deploy('checkout', '1.1.0', 'rel-2');
    await world.runFor(3_000);
    await waitFor(async () => buttonOf(APPROVE_ACTION_ID), 'the paused reply with its buttons');
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  it('a reject without a reason is answered with the usage, and nothing is held', async () => {
    const text = await answerTo((responseUrl) => sender().slashCommand({ command: '/glidepath', text: 'reject prod/shop/checkout', userId: ALICE, channelId: CHANNEL, responseUrl }));
    expect(text).toContain('a rejection needs a reason');
    expect(text).toContain('reject <pipeline@stage | cluster/namespace/rollout | cluster/namespace/appset> <reason>'.replace(/</g, '&lt;').replace(/>/g, '&gt;'));
    expect((await audit()).filter((e) => e.action === 'reject')).toEqual([]);
  });

  it('the Reject button asks for the reason; the rejection holds the step and shows who and why in the thread and the parent, and the audit names the reason', async () => {
    const reject = buttonOf(REJECT_ACTION_ID);
    expect(reject?.value).toBe(buttonOf(APPROVE_ACTION_ID)?.value);
    const thread = threadOf('rel-2')!;
    const triggerId = 'trigger-reject-1';
    const clicked = await sender().blockAction({ actionId: REJECT_ACTION_ID, value: reject!.value!, userId: ALICE, channelId: CHANNEL, messageTs: pausedReply()!.ts, threadTs: thread.ts, responseUrl: world.slack.responseUrl(), triggerId });
    expect(clicked.status).toBe(200);
    const at = await waitFor(async () => { const i = world.slack.transcript.openedViewTriggers.indexOf(triggerId); return i >= 0 ? i : undefined; }, 'the reject dialog');
    const view = world.slack.transcript.openedViews[at] as Record<string, unknown>;
    const withReason = (value: string) => ({ ...view, state: { values: { [REJECT_REASON_BLOCK_ID]: { [REJECT_REASON_ACTION_ID]: { type: 'plain_text_input', value } } } } });
    // A blank reason is refused in the dialog itself, under its field; nothing is held.
    const blank = await sender().viewSubmission({ userId: ALICE, view: withReason('   ') });
    expect(JSON.parse(blank.body)).toEqual({ response_action: 'errors', errors: { [REJECT_REASON_BLOCK_ID]: 'a rejection needs a reason: say why the step should not go on' } });
    expect((await audit()).filter((e) => e.action === 'reject')).toEqual([]);
    const submitted = await sender().viewSubmission({ userId: ALICE, view: withReason(REASON) });
    expect(submitted.status).toBe(200);

    const line = await waitFor(async () => replies().find((r) => r.text.includes('rejected')), 'the rejection line in the thread');
    expect(line.text).toContain(`<@${ALICE}>`);
    expect(line.text).toContain('p99 latency doubled at 50% &lt;!channel&gt; see &lt;https://evil.example|grafana&gt;');
    expect(line.text).not.toContain('<!channel>');
    const parent = await waitFor(async () => (said(threadOf('rel-2')).includes('*Rejected*') ? threadOf('rel-2') : undefined), 'the parent showing the rejection');
    expect(said(parent)).toContain(`:no_entry_sign: *Rejected* by <@${ALICE}>`);
    expect(said(parent)).toContain('p99 latency doubled at 50% &lt;!channel&gt;');
    expect(said(parent)).not.toContain('<!channel>');

    // Held: nothing was patched, the pause stays.
    expect(rolloutWrites()).toEqual([]);
    await world.runFor(2_000);
    expect(world.cluster.store.get(world.cluster.store.registry.byKind('Rollout'), 'shop', 'checkout').status.pauseConditions?.length).toBeGreaterThan(0);
    const entries = (await audit()).filter((e) => e.action === 'reject');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { slackUserId: ALICE }, result: 'done', requestReason: REASON, releaseId: 'rel-2', target: 'prod/shop/checkout' });
  });

  it('after a restart the new Glidepath still knows the rejection: an Approve of that step goes through and says it overrides it, by whom', async () => {
    await world.restartGlidepath();
    const approve = buttonOf(APPROVE_ACTION_ID)!;
    const clicked = await sender().blockAction({ actionId: APPROVE_ACTION_ID, value: approve.value!, userId: BOB, channelId: CHANNEL, messageTs: pausedReply()!.ts, threadTs: threadOf('rel-2')!.ts, responseUrl: world.slack.responseUrl() });
    expect(clicked.status).toBe(200);
    // A click that went through edits the clicked reply to say who did what (that edit is the thread's line).
    // Overriding a rejection gets its own line in the thread, even from a button in it.
    const text = await waitFor(async () => replies().find((r) => r.text.includes('approved step 2'))?.text, 'the approval line in the thread');
    expect(text).toContain(`<@${BOB}>`);
    expect(text).toContain('approved step 2 of prod/shop/checkout');
    expect(text).toContain(`overrides the rejection by <@${ALICE}>: “p99 latency doubled at 50% &lt;!channel&gt;`);
    expect(rolloutWrites().length).toBeGreaterThan(0);
    const approval = (await audit()).find((e) => e.action === 'approve' && e.result === 'done');
    expect(approval?.gates?.find((g) => g.gate === 'rejection')).toMatchObject({ allowed: true, overrides: { by: ALICE, reason: REASON } });
    const parent = await waitFor(async () => (said(threadOf('rel-2')).includes('approved over the rejection') ? threadOf('rel-2') : undefined), 'the parent showing the override');
    expect(said(parent)).toContain(`<@${BOB}> approved over the rejection by <@${ALICE}>`);
  });
});
