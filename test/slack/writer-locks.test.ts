/**
 * The writer's locks are short (SLACK_JOB_LOCK_MS) but a live writer keeps them: BullMQ renews
 * the job lock and the thread store renews the thread lock and reply claims every half TTL, while a
 * Slack call slower than the TTL is in flight. Nothing is fenced, posted twice or repaired.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { eventually } from '../helpers/slack-harness.js';
import { startWriterRig, type WriterRig } from '../helpers/slack-rigs.js';
import { pipelineConfig, record, reply, stage, target } from './support/records.js';

const CHANNEL = 'C0CHECKOUT';
const pipeline = pipelineConfig('checkout', CHANNEL);

let rig: WriterRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const blocksText = (m: TranscriptMessage | undefined): string => JSON.stringify(m?.blocks ?? []);

async function fencedWrites(r: WriterRig): Promise<number> {
  const metric = await r.registry.getSingleMetric('glidepath_slack_fenced_writes_total')?.get();
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

describe('Slack writer locks (SLACK_JOB_LOCK_MS)', () => {
  it('keeps its job, thread lock and reply claim through Slack calls slower than the lock', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], env: { SLACK_JOB_LOCK_MS: '1000' } });
    await rig.startWriter();
    // Every call answers 2.5 s late (the stand-in applies it first): 2.5 locks, inside the 10 s call timeout.
    rig.slack.injectFaults('chat.postMessage', 3, { kind: 'slow', delayMs: 2_500 });
    rig.slack.injectFaults('chat.update', 1, { kind: 'slow', delayMs: 2_500 });
    await rig.save(record({ status: 'InProgress', stages: [stage('staging', 'Progressing', [target('checkout-staging', { phase: 'Progressing' })]), stage('prod', 'Waiting')] }), [{ id: 'render', type: 'thread.render' }]);
    const parent = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent');
    await eventually(async () => (await rig!.idle()) || undefined, 'the parent post to settle', 30_000);

    await rig.save(record({ status: 'InProgress', stages: [stage('staging', 'Healthy', [target('checkout-staging', { phase: 'Healthy' })], { healthyAt: 1 }), stage('prod', 'Progressing', [target('checkout', { phase: 'Progressing' })])] }), [
      { id: 'render', type: 'thread.render' },
      reply('stage-healthy', {}, { id: 'staging-healthy', stage: 'staging' }),
    ]);
    await eventually(async () => (await rig!.idle()) || undefined, 'the edit and the reply to settle', 30_000);

    expect(blocksText(parent)).toContain('prod* — Progressing');
    expect(parent.edits).toHaveLength(1); // one edit: no repair render after a lost thread lock
    expect([...rig.repliesByEffect(CHANNEL).entries()]).toEqual([['staging-healthy', 1]]);
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    expect(await fencedWrites(rig)).toBe(0);
    expect(rig.log.lines.filter((l) => String(l.msg).startsWith('fenced'))).toEqual([]);
  }, 60_000);
});
