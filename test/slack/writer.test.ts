import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadEffect } from '../../src/releases/store/ports.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { eventually } from '../helpers/slack-harness.js';
import { pipelineConfig, record, reply, stage, target } from './support/records.js';
import { startWriterRig, type WriterRig } from '../helpers/slack-rigs.js';

const CHANNEL = 'C0CHECKOUT';
const pipeline = pipelineConfig('checkout', CHANNEL);
const render: ThreadEffect = { id: 'render', type: 'thread.render' };

let rig: WriterRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function blocksText(m: TranscriptMessage | undefined): string {
  return JSON.stringify(m?.blocks ?? []);
}

async function settled(r: WriterRig, what: string): Promise<void> {
  await eventually(async () => (await r.idle()) || undefined, what);
}

const paused = () =>
  record({
    status: 'Paused',
    stages: [
      stage('staging', 'Healthy', [target('checkout-staging', { phase: 'Healthy' })], { healthyAt: 1 }),
      stage('prod', 'Paused', [target('checkout', { phase: 'Paused', step: { index: 1, count: 4 }, weight: 25 })]),
    ],
  });

describe('Slack writer', () => {
  it('starts one thread per release and keeps its parent in step with the record', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    await rig.startWriter();
    await rig.save(record(), [render]);
    const parent = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    expect(blocksText(parent)).toContain('prod* — Waiting');

    await rig.save(paused(), [render, reply('paused', { generation: 3, stepIndex: 1, stepCount: 4 })]);
    await eventually(() => parent.replies[0], 'the paused reply');
    await eventually(() => blocksText(parent).includes('prod* — Paused · step 2/4 · weight 25%') || undefined, 'the parent update');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    expect(JSON.stringify(parent.replies[0]?.blocks)).toContain('glidepath.approve');
  });

  it('sends nothing for an unchanged record or a repeated effect', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    await rig.startWriter();
    const saved = await rig.save(paused(), [render, reply('paused')]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0]?.replies[0], 'the reply');
    await settled(rig, 'the queue to drain');
    const before = Object.fromEntries(rig.slack.calls);
    // The reducer worker may hand the same effects again after a crash; a heartbeat re-renders.
    await rig.outbox.send(saved, [render, reply('paused')]);
    await rig.outbox.requestRender(saved.pipeline, saved.releaseId);
    await settled(rig, 'the repeats to be processed');
    expect(Object.fromEntries(rig.slack.calls)).toEqual(before);
    expect(rig.slack.transcript.messages(CHANNEL)[0]?.replies).toHaveLength(1);
  });

  it('posts a reply once when the outbox hands it over twice in different batches', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: { postPerChannel: { burst: 20, perMinute: 600 }, update: { burst: 10, perMinute: 50 } } });
    const healthy = (i: number) => reply('stage-healthy', {}, { id: `healthy-${i}`, stage: `s${i}` });
    const saved = await rig.save(paused(), [render]);
    // An outbox that grew between two dispatches: the same effects arrive in two jobs.
    await rig.outbox.send(saved, [healthy(1), healthy(2)]);
    await rig.outbox.send(saved, [healthy(1), healthy(2), healthy(3)]);
    await rig.startWriter({ concurrency: 8 });
    await rig.startWriter({ concurrency: 8 });
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0]?.replies.length === 3 || undefined, 'three replies');
    await settled(rig, 'both jobs to finish');
    expect(rig.slack.transcript.messages(CHANNEL)[0]?.replies.map((r) => r.text).sort()).toEqual([
      ':white_check_mark: *s1* — `prod/shop/checkout` is Healthy for this release.',
      ':white_check_mark: *s2* — `prod/shop/checkout` is Healthy for this release.',
      ':white_check_mark: *s3* — `prod/shop/checkout` is Healthy for this release.',
    ]);
  });

  it('continues the same thread after a restart', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    const first = await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    await settled(rig, 'the first writer to finish');
    await first.close();
    rig.writers.splice(0);

    await rig.startWriter();
    await rig.save(paused(), [render, reply('paused')]);
    const parent = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0]?.replies[0] && rig!.slack.transcript.messages(CHANNEL)[0], 'the reply');
    await eventually(() => blocksText(parent).includes('prod* — Paused') || undefined, 'the updated parent');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
  });

  it('keeps the thread of an unfinished release as long as the record (unfinishedReleaseTtlDays over 30)', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], settings: { unfinishedReleaseTtlDays: 40 } });
    await rig.startWriter();
    const saved = await rig.save(paused(), [render, reply('paused')]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0]?.replies[0], 'the reply');
    await settled(rig, 'the queue to drain');
    // Thread keys that expired before the record would start a second thread for the same release.
    const thirtyDaysMs = 30 * 86_400_000;
    expect(await rig.redis.pttl(rig.keys.slackThread(saved.pipeline, saved.releaseId))).toBeGreaterThan(thirtyDaysMs);
    expect(await rig.redis.pttl(rig.keys.slackReplies(saved.pipeline, saved.releaseId))).toBeGreaterThan(thirtyDaysMs);
  });

  it('posts exactly one parent when replicas race on a new release', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: { postPerChannel: { burst: 20, perMinute: 600 }, update: { burst: 10, perMinute: 50 } } });
    await rig.startWriter({ concurrency: 8 });
    await rig.startWriter({ concurrency: 8 });
    await rig.startWriter({ concurrency: 8 });
    const replies = ['paused', 'drift', 'stall', 'degraded', 'sync-failed'].map((k, i) => reply(k as never, {}, { id: `e${i}` }));
    await rig.save(paused(), [render, ...replies]);
    await eventually(() => (rig!.slack.transcript.messages(CHANNEL)[0]?.replies.length === 5) || undefined, 'all replies');
    await settled(rig, 'the queue to drain');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
  });

  it('waits out 429s from Slack and still lands the final state', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    rig.slack.injectFaults('chat.update', 2, { kind: 'rate-limited', retryAfterSeconds: 1 });
    rig.slack.injectFaults('chat.postMessage', 1, { kind: 'rate-limited', retryAfterSeconds: 1 });
    await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    await rig.save(paused(), [render]);
    const done = record({ status: 'Complete', stages: [stage('staging', 'Healthy', [], { healthyAt: 1 }), stage('prod', 'Healthy', [target('checkout', { phase: 'Healthy' })], { healthyAt: 2 })] });
    await rig.save(done, [render]);
    await eventually(() => blocksText(rig!.slack.transcript.messages(CHANNEL)[0]).includes(':white_check_mark: *Complete*') || undefined, 'the final state');
    expect(rig.slack.rateLimited.get('chat.update')).toBe(2);
    expect(await rig.registry.getSingleMetricAsString('glidepath_slack_rate_limited_total')).toContain('method="chat.update"} 2');
  });

  it('retries 5xx and network errors with backoff', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    // Three failures: more than the client's own quick retries, so BullMQ's backoff takes over.
    rig.slack.injectFaults('chat.postMessage', 2, { kind: 'http', status: 503 });
    rig.slack.injectFaults('chat.postMessage', 1, { kind: 'drop-connection' });
    await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent after retries');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
  });

  it('starts a new thread when someone deleted the parent in Slack', async () => {
    rig = await startWriterRig({ pipelines: [pipeline] });
    await rig.startWriter();
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the first parent');
    await settled(rig, 'the first parent job');
    rig.slack.injectFaults('chat.update', 1, { kind: 'error', error: 'message_not_found' });
    await rig.save(paused(), [render]);
    const second = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[1], 'a new parent');
    expect(blocksText(second)).toContain('prod* — Paused');
  });

  for (const error of ['channel_not_found', 'not_in_channel', 'invalid_auth']) {
    it(`stops on ${error} with a clear log line and a metric, without retrying`, async () => {
      rig = await startWriterRig({ pipelines: [pipeline] });
      rig.slack.injectFaults('chat.postMessage', 100, { kind: 'error', error });
      await rig.startWriter();
      await rig.save(record(), [render]);
      const line = await eventually(() => rig!.log.lines.find((l) => String(l.msg).startsWith(`Slack chat.postMessage failed with ${error}`)), 'the log line');
      expect(line).toMatchObject({ level: 50, pipeline: 'checkout', release: 'rel-5' });
      await settled(rig, 'the job to end');
      expect(rig.slack.calls.get('chat.postMessage')).toBe(1);
      expect(await rig.registry.getSingleMetricAsString('glidepath_slack_permanent_errors_total')).toContain(`error="${error}",method="chat.postMessage"} 1`);
    });
  }

  it('sends a reply someone must act on before routine replies waiting for the same channel', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], budgets: { postPerChannel: { burst: 2, perMinute: 120 }, update: { burst: 10, perMinute: 50 } } });
    await rig.startWriter({ concurrency: 1 });
    await rig.save(record(), [render]);
    await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    await settled(rig, 'the parent job');
    await rig.writers[0]!.close();
    rig.writers.splice(0);
    const routine = Array.from({ length: 4 }, (_, i) => reply('stage-healthy', {}, { id: `healthy-${i}`, stage: `s${i}` }));
    await rig.save(paused(), [...routine, reply('paused', {}, { id: 'needs-approval' })]);
    await rig.startWriter({ concurrency: 1 });
    const replies = await eventually(() => (rig!.slack.transcript.messages(CHANNEL)[0]?.replies.length === 5 ? rig!.slack.transcript.messages(CHANNEL)[0]!.replies : undefined), 'all replies');
    expect(replies[0]?.text).toContain('waits for approval');
  });
});
