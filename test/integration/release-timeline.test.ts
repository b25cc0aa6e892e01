/**
 * The release timeline in the thread: a release that completes (two stages, each with a canary
 * that waited for approval) and one that fails (its analysis fails, the controller aborts) each
 * get one image in their thread, after the reply that ended them, uploaded with Slack's upload
 * flow to the Slack stand-in; the first upload of bytes fails and the Complete reply still
 * arrives, once, and the image after it. A pipeline with `charts: false` gets none. The image
 * decodes at a sane size and its alt text names the stages, the steps and the waits. A release
 * already healthy when first heard gets none (nothing was heard between its start and its end).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIMELINE_WIDTH } from '../../src/slack/render/release-timeline-image.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { readPngHeader } from '../slack/support/png.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const SHOP = 'C0TIMELINE';
const QUIET = 'C0QUIETTL';
const PAY = 'C0PAYTL';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/charts/', import.meta.url));
const STEPS = [{ setWeight: 20 }, { pause: {} }, { analysis: { templates: [{ templateName: 'success-rate' }] } }, { setWeight: 50 }];
const stage = (name: string, app: string, env: string) => `{ name: ${name}, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=${app},env=${env}" } }`;
const PIPELINES = `
  - name: shop
    channel: ${SHOP}
    stages:
      - ${stage('staging', 'shop', 'staging')}
      - ${stage('prod', 'shop', 'prod')}
  - name: quiet
    channel: ${QUIET}
    charts: false
    stages:
      - ${stage('prod', 'quiet', 'prod')}
  - name: pay
    channel: ${PAY}
    stages:
      - ${stage('prod', 'pay', 'prod')}`;
const labels = (app: string, env: string) => ({ 'app.kubernetes.io/part-of': app, env });
const ROLLOUTS = [
  { name: 'checkout-staging', labels: labels('shop', 'staging'), pipeline: 'shop' },
  { name: 'checkout', labels: labels('shop', 'prod'), pipeline: 'shop' },
  { name: 'quiet', labels: labels('quiet', 'prod'), pipeline: 'quiet' },
  { name: 'payments', labels: labels('pay', 'prod'), pipeline: 'pay' },
];

describe('the release timeline in the thread', () => {
  let world: WatchedWorld;
  const sectionText = (m: TranscriptMessage) => m.blocks.flatMap((b) => ((b as { type: string }).type === 'section' ? [(b as { text?: { text?: string } }).text?.text ?? ''] : [])).join('\n') || m.text;
  const thread = (channel: string, release: string) => world.slack.transcript.messages(channel).find((m) => m.metadata?.event_payload.release === release);
  const timelines = (m: TranscriptMessage | undefined) => (m?.replies ?? []).filter((r) => r.files?.some((f) => f.name === 'release-timeline.png'));
  const timelineFile = (m: TranscriptMessage | undefined) => timelines(m).flatMap((r) => r.files!).find((f) => f.name === 'release-timeline.png')!;

  /** Glidepath's record of rel-2 has `name` paused. */
  const heardPaused = async (name: string): Promise<boolean> => {
    const { pipeline } = ROLLOUTS.find((r) => r.name === name)!;
    const record = await world.app.store.get(pipeline, 'rel-2');
    return record?.stages.some((s) => Object.values(s.targets).some((t) => t.ref.name === name && t.phase === 'Paused')) ?? false;
  };

  beforeAll(async () => {
    world = await startWatchedWorld({
      channel: SHOP,
      steps: STEPS,
      pipelines: PIPELINES,
      rollouts: { analysisMs: 3_000, analysisOutcome: (rollout) => (rollout.metadata.name === 'payments' ? { phase: 'Failed', values: ['[0.97]', '[0.82]'] } : { phase: 'Successful', values: ['[0.99]'] }) },
    });
    for (const r of ROLLOUTS) world.deploy(r.name, '1.0.0', 'rel-1', r.labels);
    await world.runFor(5_000);
    for (const r of ROLLOUTS) await waitFor(async () => (await world.app.store.get(r.pipeline, 'rel-1'))?.status === 'Complete' || undefined, `${r.pipeline} rel-1 complete`);
    await world.settled();
    // Slack's upload service fails the next POST of bytes: the Complete reply still goes, and the image once after it.
    world.slack.injectFaults('files.upload', 1, { kind: 'http', status: 500 });
    for (const r of ROLLOUTS) world.deploy(r.name, '2.0.0', 'rel-2', r.labels);
    await world.runFor(4_000);
    // A person waits at each pause, then approves it with kubectl; staging first, prod later.
    for (const names of [['checkout-staging', 'quiet', 'payments'], ['checkout']]) {
      await world.runFor(10_000);
      for (const name of names) {
        // The person approves what the thread shows paused: wait until Glidepath heard the pause (the cluster's clock moves meanwhile).
        await waitFor(async () => (await heardPaused(name)) || (await world.runFor(1_000), undefined), `Glidepath to hear ${name} paused at rel-2`);
        await world.kubectlStatusPatch(name, { pauseConditions: null });
      }
    }
    await world.runFor(20_000);
    await waitFor(async () => (timelines(thread(SHOP, 'rel-2')).length > 0 && timelines(thread(PAY, 'rel-2')).length > 0) || undefined, 'timelines in the shop and pay rel-2 threads', 30_000);
    await world.settled();
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  it('a release that completes gets one timeline in its thread, after the Complete reply, which is posted once though the first upload failed', async () => {
    expect((await world.app.store.get('shop', 'rel-2'))?.status).toBe('Complete');
    const rel2 = thread(SHOP, 'rel-2')!;
    const complete = rel2.replies.filter((r) => /complete/i.test(sectionText(r)) && !r.files);
    expect(complete).toHaveLength(1);
    expect(timelines(rel2)).toHaveLength(1);
    expect(timelineFile(rel2).altText).toBeDefined();
    expect(rel2.replies.indexOf(timelines(rel2)[0]!)).toBeGreaterThan(rel2.replies.indexOf(complete[0]!));
    // rel-1 (its first release, no steps) was already healthy when first heard: nothing in between to draw, no
    // image of bars of 0 s; the Complete reply says it ended. None moved to another thread.
    expect(timelines(thread(SHOP, 'rel-1'))).toHaveLength(0);
    expect(thread(SHOP, 'rel-1')!.replies.some((r) => /complete/i.test(sectionText(r)))).toBe(true);
    expect(world.slack.calls.get('files.upload')).toBeGreaterThan(world.slack.calls.get('files.completeUploadExternal') ?? 0);
  });

  it('the image decodes at a sane size and its alt text names the stages, their steps and the waits for approval', () => {
    const file = timelineFile(thread(SHOP, 'rel-2'));
    const header = readPngHeader(file.bytes);
    expect(header.width).toBe(TIMELINE_WIDTH);
    // Title, two stage rows and their steps: taller than the frame alone, and bounded.
    expect(header.height).toBeGreaterThan(250);
    expect(header.height).toBeLessThan(1_000);
    expect(file.bytes.length).toBeGreaterThan(5_000);
    const alt = file.altText!;
    expect(alt).toContain('Timeline of release rel-2 of shop (Complete)');
    expect(alt).toMatch(/Stage staging: [^.]* to healthy/);
    expect(alt).toMatch(/Stage prod: [^.]* to healthy/);
    expect(alt).toMatch(/step 2\/4: [^(]*\(waited \d+ s for approval, resumed outside Glidepath\)/);
    expect(alt.match(/waited \d+ s for approval/g)).toHaveLength(2);
    expect(alt).not.toContain('step 5/4');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(`${ARTIFACTS}release-timeline.png`, file.bytes);
  });

  it('a release that fails gets one timeline too, its stage drawn until it failed', async () => {
    expect(['Failed', 'Aborted']).toContain((await world.app.store.get('pay', 'rel-2'))?.status);
    const rel2 = thread(PAY, 'rel-2')!;
    expect(timelines(rel2)).toHaveLength(1);
    const alt = timelineFile(rel2).altText!;
    expect(alt).toContain('Timeline of release rel-2 of pay');
    expect(alt).toMatch(/Stage prod: [^.]* until it failed/);
  });

  it('a pipeline with charts: false gets no timeline', async () => {
    expect((await world.app.store.get('quiet', 'rel-2'))?.status).toBe('Complete');
    for (const release of ['rel-1', 'rel-2']) {
      const quiet = thread(QUIET, release)!;
      expect(quiet.replies.some((r) => /complete/i.test(sectionText(r)))).toBe(true);
      expect(quiet.replies.filter((r) => r.files && r.files.length > 0)).toHaveLength(0);
    }
  });
});
