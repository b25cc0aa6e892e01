import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { NOT_CONFIGURED } from '../../src/slack/listeners/surface.js';
import type { ButtonValue } from '../../src/slack/buttons.js';
import { testConfig } from '../helpers/pipeline.js';
import { releaseFacts } from './e2e-scenario.js';
import { eventually } from '../helpers/slack-harness.js';
import { startPipelineRig, type PipelineRig } from '../helpers/slack-rigs.js';

const CHANNEL = 'C0123CHECKOUT';
let rig: PipelineRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const blocks = (m: TranscriptMessage | undefined) => JSON.stringify(m?.blocks ?? []);

async function idle(r: PipelineRig, what: string): Promise<void> {
  await eventually(async () => (await r.idle()) || undefined, what, 60_000);
}

const EXPECTED_REPLIES = [
  ':white_check_mark: *staging* is Healthy for this release.',
  ':double_vertical_bar: *prod* — `prod/shop/checkout` is paused (step 2/7, weight 20%) and waits for approval.',
  // The scenario's notifications show the pause end with no Glidepath action: someone resumed it elsewhere.
  ':arrow_forward: *prod* — `prod/shop/checkout` was resumed outside Glidepath (step 2/7): the pause this thread asked about is over.',
  ':white_check_mark: *prod* is Healthy for this release.',
  ':tada: Release `rel-5` is complete: every stage was healthy.',
];

function expectFinalThread(r: PipelineRig): TranscriptMessage {
  const threads = r.slack.transcript.messages(CHANNEL);
  expect(threads).toHaveLength(1);
  const parent = threads[0]!;
  expect(parent.text).toBe('Release rel-5 (checkout): Complete. staging Healthy, prod Healthy');
  expect(blocks(parent)).toContain(':white_check_mark: *staging* — Healthy');
  expect(blocks(parent)).toContain(':white_check_mark: *prod* — Healthy');
  // The finished release's timeline image is a file share of its own (test/integration/release-timeline.test.ts reads it).
  const shares = parent.replies.filter((m) => (m.files ?? []).length > 0);
  expect(shares).toHaveLength(1);
  const replies = parent.replies.filter((m) => !shares.includes(m)).map((m) => m.text);
  expect([...replies].sort()).toEqual([...EXPECTED_REPLIES].sort());
  // Routine replies read in the order things happened; the approval request may overtake them.
  expect(replies.filter((t) => !t.includes('waits for approval'))).toEqual(EXPECTED_REPLIES.filter((t) => !t.includes('waits for approval')));
  return parent;
}

describe('release thread, end to end (facts → reducer → writer → Slack stand-in, real Bolt)', () => {
  it("turns a release's facts into one thread whose final parent and replies are right", async () => {
    rig = await startPipelineRig({ config: testConfig() });
    await rig.startBot();
    for (const f of releaseFacts(Date.now()).facts) await rig.addAndReduce(f);
    await idle(rig, 'the release to be written');
    const parent = expectFinalThread(rig);

    const paused = parent.replies.find((m) => m.text.includes('waits for approval'))!;
    // The pause is over, so the reply lost its buttons; the click below is one from a Slack client still showing them.
    expect(paused.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(blocks(paused)).toContain('Resumed outside Glidepath; these buttons are gone.');
    const shown = paused.edits[0]!;
    const actions = (shown.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions');
    const approve = actions?.elements?.find((e) => e.action_id === 'glidepath.approve');
    const value = JSON.parse(approve!.value) as ButtonValue;
    expect(value).toMatchObject({ p: 'checkout', r: 'rel-5', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', g: 5, h: '7c9d6b5f48', s: 1 });

    // A click goes through the real Bolt app; without cluster clients it gets an honest answer.
    const responseUrl = rig.slack.responseUrl();
    const res = await rig.sender.blockAction({ actionId: 'glidepath.approve', value: approve!.value, userId: 'U0ALICE', channelId: CHANNEL, messageTs: paused.ts, threadTs: parent.ts, responseUrl });
    expect(res.status).toBe(200);
    const answer = await eventually(() => rig!.slack.transcript.responses.find((x) => responseUrl.endsWith(x.id)), 'the answer to the click');
    expect(answer.body.text).toBe(NOT_CONFIGURED);
  });

  it('continues the same thread after the bot restarts mid-release', async () => {
    rig = await startPipelineRig({ config: testConfig() });
    await rig.startBot();
    const { facts, pausedIndex } = releaseFacts(Date.now());
    for (const f of facts.slice(0, pausedIndex + 1)) await rig.addAndReduce(f);
    await idle(rig, 'the first half');
    const before = rig.slack.transcript.messages(CHANNEL);
    expect(before).toHaveLength(1);
    expect(blocks(before[0])).toContain('*prod* — Paused');

    await rig.stopBot();
    await rig.startBot();
    for (const f of facts.slice(pausedIndex + 1)) await rig.addAndReduce(f);
    await idle(rig, 'the second half');
    const parent = expectFinalThread(rig);
    expect(parent.ts).toBe(before[0]!.ts);
  });

  it('loses no update in a 429 storm from Slack', { timeout: 120_000 }, async () => {
    // Each 429 says Retry-After: 1; the writer waits a twentieth of it (the storm's order and count are the same).
    rig = await startPipelineRig({ config: testConfig(), retryAfterScale: 0.05 });
    for (const method of ['chat.update', 'chat.postMessage']) rig.slack.injectFaults(method, 6, { kind: 'rate-limited', retryAfterSeconds: 1 });
    await rig.startBot();
    // Facts one by one, each seen by the writer, so every intermediate parent meets the storm.
    for (const f of releaseFacts(Date.now()).facts) {
      await rig.add(f);
      await idle(rig, 'the fact to be written');
    }
    expectFinalThread(rig);
    expect(rig.slack.rateLimited.get('chat.update')).toBeGreaterThan(0);
    expect(rig.slack.rateLimited.get('chat.postMessage')).toBeGreaterThan(0);
    const metric = await rig.registry.getSingleMetric('glidepath_slack_rate_limited_total')!.get();
    expect(metric.values.reduce((n, v) => n + v.value, 0)).toBe((rig.slack.rateLimited.get('chat.update') ?? 0) + (rig.slack.rateLimited.get('chat.postMessage') ?? 0));
  });
});
