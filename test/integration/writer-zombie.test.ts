/**
 * A Slack writer stopped (SIGSTOP) inside a reply job, past its job lock and reply claims
 * (issue 20, item 5): a survivor writer renders the release's end, the stopped writer's job comes
 * back to it as stalled, and its reply, produced before the end, is posted after it once and
 * marked late. The stopped writer, continued, posts nothing. Real processes, Redis and the Slack
 * stand-in; no timed assertion but hang guards (the time the parent stayed stale is printed).
 */
import { forkGlidepathChild, type GlidepathChild } from '../helpers/child-glidepath.js';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { RIG_BOT_TOKEN, startWriterRig, type WriterRig } from '../helpers/slack-rigs.js';
import { eventually } from '../helpers/slack-harness.js';
import { pipelineConfig, record, reply, stage, target } from '../slack/support/records.js';

const CHILD = fileURLToPath(new URL('../fixtures/writer-child.ts', import.meta.url));
const CHANNEL = 'C0CHECKOUT';
const pipeline = pipelineConfig('checkout', CHANNEL);
/** The survivor's lock (its stalled check runs every half of it) and the stopped writer's; WRITER_ZOMBIE_LOCK_MS measures others (the default 10 000). */
const SURVIVOR_LOCK_MS = process.env.WRITER_ZOMBIE_LOCK_MS ?? '2000';
const ZOMBIE_LOCK_MS = process.env.WRITER_ZOMBIE_LOCK_MS ?? '4000';

type Child = GlidepathChild;
const startWriterChild = (env: Record<string, string>): Promise<Child> => forkGlidepathChild(CHILD, env);

/**
 * A woken writer's log line saying its held job is over: the fence refused a Slack call or a
 * thread write (writer.ts `fenced`), or the job's code ran to its end and BullMQ refused to
 * finish it (`Missing lock for job … moveTo…`). Either comes after any call the job would make,
 * unlike the lock renewal's warning, which BullMQ's timer logs the moment the process goes on.
 */
const isFencedLine = (line: string): boolean => /"msg":"fenced: |Missing lock for job [^"]*\. moveTo/.test(line);
const effectOf = (m: TranscriptMessage): string => String(m.metadata?.event_payload.effect ?? '');
const blocksText = (m: TranscriptMessage | undefined): string => JSON.stringify(m?.blocks ?? []);

const running = () => record({ status: 'InProgress', stages: [stage('staging', 'Progressing', [target('checkout-staging', { phase: 'Progressing' })]), stage('prod', 'Waiting')] });
const stagingHealthy = () =>
  record({ status: 'InProgress', stages: [stage('staging', 'Healthy', [target('checkout-staging', { phase: 'Healthy' })], { healthyAt: 1 }), stage('prod', 'Progressing', [target('checkout', { phase: 'Progressing' })])] });
const complete = () =>
  record({ status: 'Complete', stages: [stage('staging', 'Healthy', [target('checkout-staging', { phase: 'Healthy' })], { healthyAt: 1 }), stage('prod', 'Healthy', [target('checkout', { phase: 'Healthy' })], { healthyAt: 2 })] });

describe('a Slack writer stopped with a job in hand (the writer zombie)', () => {
  let rig: WriterRig | undefined;
  const children: Child[] = [];
  const rigs: WriterRig[] = [];

  afterAll(async () => {
    for (const c of children) {
      c.process.kill('SIGCONT');
      c.process.kill('SIGKILL');
    }
    for (const r of rigs) await r.close();
  });

  /** A writer replica of the rig's deployment in its own process, one job at a time. */
  async function startZombie(r: WriterRig): Promise<Child> {
    rigs.push(r);
    const zombie = await startWriterChild({
      PORT: '0', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: r.prefix, LOG_LEVEL: 'warn', INGEST_TOKENS: 'prod=prod-token-0123456789abcdef',
      SLACK_BOT_TOKEN: RIG_BOT_TOKEN, SLACK_SIGNING_SECRET: 'writer-zombie-secret', SLACK_API_URL: r.slack.apiUrl, SLACK_JOB_LOCK_MS: ZOMBIE_LOCK_MS,
      PIPELINE: pipeline.name, CHANNEL, WRITER_CONCURRENCY: '1',
    });
    children.push(zombie);
    return zombie;
  }

  it('loses its job to a survivor, which shows the end at once and posts the held reply after it, once, marked late; woken, it posts nothing', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], env: { SLACK_JOB_LOCK_MS: SURVIVOR_LOCK_MS } });
    const zombie = await startZombie(rig);

    // The zombie starts the thread while it is the only writer.
    await rig.save(running(), [{ id: 'render', type: 'thread.render' }]);
    const parent = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent, posted by the zombie');

    // Two routine replies of one record travel in one job. Slack stores the first and answers
    // late: the zombie is inside that job (its lock, the first reply's claim) when it is stopped.
    rig.slack.injectFaults('chat.postMessage', 1, { kind: 'slow', delayMs: 3_000 });
    await rig.save(stagingHealthy(), [reply('stage-healthy', {}, { id: 'staging-healthy', stage: 'staging' }), reply('heard-again', {}, { id: 'prod-heard-again' })]);
    await eventually(() => parent.replies.find((r) => effectOf(r) === 'staging-healthy'), 'the first reply to reach Slack');
    zombie.process.kill('SIGSTOP');

    // The release ends while the zombie is stopped (it would take nothing else: one job at a time).
    await rig.save(complete(), [{ id: 'render', type: 'thread.render' }, reply('release-complete', {}, { id: 'complete' })]);
    const survivorStarted = Date.now();
    await rig.startWriter();
    await eventually(() => blocksText(parent).includes(':white_check_mark: *Complete*') || undefined, 'the survivor to show Complete', 30_000);
    const staleMs = Date.now() - survivorStarted;
    const late = await eventually(() => parent.replies.find((r) => effectOf(r) === 'prod-heard-again'), 'the held reply, once the zombie lost its job', 30_000);
    console.log(`writer zombie: parent Complete ${staleMs} ms after the survivor started; held reply posted ${Date.now() - survivorStarted} ms after`);

    const order = parent.replies.map(effectOf);
    expect(order.indexOf('prod-heard-again')).toBeGreaterThan(order.indexOf('complete'));
    expect(blocksText(late)).toContain('Posted late: this happened earlier');
    expect(blocksText(late)).toContain('before the release completed');
    expect(late.text).toMatch(/^\(Earlier, before the release completed\)/);
    // Replies that came in time read as ever.
    for (const r of parent.replies.filter((m) => effectOf(m) !== 'prod-heard-again')) expect(blocksText(r)).not.toContain('Posted late');

    // The zombie wakes with its answer (or its timeout) in hand: it must post or edit nothing more.
    const callsBefore = (rig.slack.calls.get('chat.postMessage') ?? 0) + (rig.slack.calls.get('chat.update') ?? 0);
    zombie.process.kill('SIGCONT');
    // Waited for the end of its held job, so a call it made on waking would be counted below.
    await eventually(() => zombie.lines.find(isFencedLine), 'the zombie to meet the fence', 30_000);
    await eventually(async () => (await rig!.idle()) || undefined, 'the queue to drain', 30_000);
    expect((rig.slack.calls.get('chat.postMessage') ?? 0) + (rig.slack.calls.get('chat.update') ?? 0)).toBe(callsBefore);
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    expect([...rig.repliesByEffect(CHANNEL).values()].every((n) => n === 1)).toBe(true);
    expect([...rig.repliesByEffect(CHANNEL).keys()].sort()).toEqual(['complete', 'prod-heard-again', 'staging-healthy']);
  }, 120_000);

  it('stopped inside a parent edit, holds the render job and the thread only until its lock expires: the survivor shows the end, and the woken edit is fenced', async () => {
    rig = await startWriterRig({ pipelines: [pipeline], env: { SLACK_JOB_LOCK_MS: SURVIVOR_LOCK_MS } });
    const zombie = await startZombie(rig);
    await rig.save(running(), [{ id: 'render', type: 'thread.render' }]);
    const parent = await eventually(() => rig!.slack.transcript.messages(CHANNEL)[0], 'the parent, posted by the zombie');

    // Slack applies the edit and answers late: the zombie is inside the render job, under the thread lock.
    rig.slack.injectFaults('chat.update', 1, { kind: 'slow', delayMs: 3_000 });
    await rig.save(stagingHealthy(), [{ id: 'render', type: 'thread.render' }]);
    await eventually(() => blocksText(parent).includes('prod* — Progressing') || undefined, 'the zombie\'s edit to reach Slack');
    zombie.process.kill('SIGSTOP');

    // The end is reduced while the zombie holds the thread's render job (one per thread: the new render waits behind it).
    const survivorStarted = Date.now();
    await rig.startWriter();
    await rig.save(complete(), [{ id: 'render', type: 'thread.render' }, reply('release-complete', {}, { id: 'complete' })]);
    await eventually(() => parent.replies.find((r) => effectOf(r) === 'complete'), 'the survivor to post the end', 30_000);
    await eventually(() => blocksText(parent).includes(':white_check_mark: *Complete*') || undefined, 'the parent to show Complete once the zombie lost its job', 60_000);
    console.log(`writer zombie: parent stayed stale ${Date.now() - survivorStarted} ms after the end was saved (zombie lock ${ZOMBIE_LOCK_MS} ms)`);

    const postsBefore = rig.slack.calls.get('chat.postMessage') ?? 0;
    zombie.process.kill('SIGCONT');
    await eventually(() => zombie.lines.find(isFencedLine), 'the zombie to meet the fence', 30_000);
    await eventually(async () => (await rig!.idle()) || undefined, 'the queue to drain', 30_000);
    // Whatever it did on waking (a fenced edit asks for a forced render: the survivor's, of the newest record), Slack ends on Complete.
    expect(blocksText(parent)).toContain(':white_check_mark: *Complete*');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    expect([...rig.repliesByEffect(CHANNEL).entries()]).toEqual([['complete', 1]]);
    // The survivor's forced render may edit the parent again; nobody posts anything new.
    expect(rig.slack.calls.get('chat.postMessage') ?? 0).toBe(postsBefore);
  }, 120_000);
});
