/**
 * Slack failing in the ways the fault campaign found (issue 9, items 4 and 5): every reply
 * arrives, none twice, and each release has one parent. Real WebClient against the stand-in,
 * real Redis under the test's own prefix.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Fault } from '../../sandbox/slack/server.js';
import type { ThreadEffect } from '../../src/releases/store/ports.js';
import { PostLedger, postMetadata } from '../../src/slack/writer/post-ledger.js';
import { createSlackClient } from '../../src/slack/client.js';
import { eventually } from '../helpers/slack-harness.js';
import { pipelineConfig, record, reply } from './support/records.js';
import { startWriterRig, type WriterRig } from '../helpers/slack-rigs.js';
import { RIG_BOT_TOKEN } from '../helpers/slack-rigs.js';

const CHANNEL = 'C0CHECKOUT';
const pipeline = pipelineConfig('checkout', CHANNEL);
const render: ThreadEffect = { id: 'render', type: 'thread.render' };
const roomy = { postPerChannel: { burst: 20, perMinute: 600 }, update: { burst: 20, perMinute: 600 }, history: { burst: 50, perMinute: 6_000 } };
const fastRetry = { baseMs: 20, capMs: 200, maxMs: 3_600_000 };
const replies = ['paused', 'drift', 'stall'].map((k, i) => reply(k as never, {}, { id: `effect-${i}` }));

let rig: WriterRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function settled(r: WriterRig, what: string): Promise<void> {
  await eventually(async () => (await r.idle()) || undefined, what, 30_000);
}

async function metric(r: WriterRig, name: string): Promise<string> {
  return r.registry.getSingleMetricAsString(name);
}

/** Exactly one parent, and each effect posted exactly once in its thread. */
function expectOneOfEach(r: WriterRig): void {
  expect(r.slack.transcript.messages(CHANNEL)).toHaveLength(1);
  expect(Object.fromEntries(r.repliesByEffect(CHANNEL))).toEqual({ 'effect-0': 1, 'effect-1': 1, 'effect-2': 1 });
}

async function allReplies(r: WriterRig): Promise<void> {
  await eventually(() => (r.slack.transcript.messages(CHANNEL)[0]?.replies.length === 3) || undefined, 'three replies', 30_000);
  await settled(r, 'the queue to drain');
}

describe('Slack writer under faults: 0 lost, 0 doubled', () => {
  const ambiguous: [string, Fault][] = [
    ['a 500 after Slack stored the message', { kind: 'accepted-then-http', status: 500 }],
    ['a dropped connection after Slack stored the message', { kind: 'accepted-then-drop' }],
  ];
  for (const [name, fault] of ambiguous) {
    it(`adopts the parent and the replies on ${name} instead of posting them again`, async () => {
      rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: fastRetry });
      // Every post fails this way once: the parent and all three replies.
      rig.slack.injectFaults('chat.postMessage', 4, fault);
      await rig.startWriter();
      await rig.save(record(), [render, ...replies]);
      await allReplies(rig);
      expectOneOfEach(rig);
      expect(rig.slack.transcript.messages(CHANNEL)[0]?.metadata).toEqual(postMetadata({ pipeline: 'checkout', releaseId: 'rel-5', effectId: 'parent' }));
      const adopted = await metric(rig, 'glidepath_slack_adopted_posts_total');
      expect(adopted).toContain('kind="parent"} 1');
      expect(adopted).toContain('kind="reply"} 3');
    });
  }

  it('adopts posts whose answer came after the client timeout', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: fastRetry, callTimeoutMs: 300 });
    rig.slack.injectFaults('chat.postMessage', 4, { kind: 'slow', delayMs: 1_500 });
    await rig.startWriter();
    await rig.save(record(), [render, ...replies]);
    await allReplies(rig);
    expectOneOfEach(rig);
    expect(await metric(rig, 'glidepath_slack_adopted_posts_total')).toContain('kind="reply"} 3');
  });

  it('adopts the parent a killed worker posted before it could save the thread', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: fastRetry });
    // What a kill -9 right after chat.postMessage leaves: Slack has the parent, Redis only the attempt.
    const key = { pipeline: 'checkout', releaseId: 'rel-5', effectId: 'parent' };
    await new PostLedger(rig.redis, rig.keys).begin(key, Date.now());
    await createSlackClient(RIG_BOT_TOKEN, rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: 'Release rel-5 (checkout)', metadata: postMetadata(key) });
    await rig.startWriter();
    await rig.save(record(), [render, ...replies]);
    await allReplies(rig);
    expectOneOfEach(rig);
    // The adopted parent is brought up to date with the record.
    expect(rig.slack.transcript.messages(CHANNEL)[0]?.text).not.toBe('Release rel-5 (checkout)');
  });

  it('keeps retrying through a Slack outage far longer than the old ten attempts, shows it in the metrics, and delivers everything after', { timeout: 90_000 }, async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: fastRetry });
    await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    await settled(rig, 'the parent job');
    rig.slack.outage(3_600_000);
    await rig.save(record({ version: 1 }), replies);
    // Outcome, not time: each reply job has failed well over ten times and is still queued.
    await eventually(async () => {
      const text = await metric(rig!, 'glidepath_slack_retries_total');
      const total = [...text.matchAll(/^glidepath_slack_retries_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
      return total >= 30 || undefined;
    }, 'thirty retries during the outage', 60_000);
    expect(await metric(rig, 'glidepath_slack_retrying_jobs')).toMatch(/glidepath_slack_retrying_jobs [1-9]/);
    expect(await metric(rig, 'glidepath_slack_oldest_failure_seconds')).toMatch(/glidepath_slack_oldest_failure_seconds (?!0\n)[0-9.]+/);
    expect(rig.slack.transcript.messages(CHANNEL)[0]?.replies).toHaveLength(0);
    expect(await metric(rig, 'glidepath_slack_gave_up_total')).not.toMatch(/gave_up_total\{/);

    rig.slack.outage(0);
    await allReplies(rig);
    expectOneOfEach(rig);
    expect(await metric(rig, 'glidepath_slack_retrying_jobs')).toMatch(/glidepath_slack_retrying_jobs 0/);
  });

  it('gives up after the configured retry window with an error line and a metric', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: { baseMs: 20, capMs: 50, maxMs: 300 } });
    await rig.startWriter(); // a writer starts only with a Slack that answers (its token is checked)
    rig.slack.outage(3_600_000);
    await rig.save(record(), [render]);
    const line = await eventually(() => rig!.log.lines.find((l) => String(l.msg).includes('longer than the retry window')), 'the give-up line');
    expect(line).toMatchObject({ level: 50, pipeline: 'checkout', release: 'rel-5', error: 'http_503' });
    // The parent job and a follow-up render requested while it ran may each give up.
    expect(await metric(rig, 'glidepath_slack_gave_up_total')).toMatch(/job="parent",error="http_503"\} [12]$/m);
  });

  it('does not retry a post Slack refuses as invalid', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: roomy, retry: fastRetry });
    rig.slack.injectFaults('chat.postMessage', 100, { kind: 'error', error: 'invalid_blocks' });
    await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.log.lines.find((l) => String(l.msg).startsWith('Slack chat.postMessage failed with invalid_blocks')), 'the log line');
    await settled(rig, 'the job to end');
    expect(rig.slack.calls.get('chat.postMessage')).toBe(1);
    expect(rig.slack.calls.get('conversations.history')).toBeUndefined();
  });
});
