/**
 * The chart of a failed and of an inconclusive analysis, in the thread: the Rollouts simulator
 * measures a metric several times over the run; Glidepath posts the failure reply, then uploads a
 * PNG per failing metric through Slack's upload flow (files.getUploadURLExternal, a POST of the
 * bytes, files.completeUploadExternal into the thread) to the Slack stand-in. The first upload of
 * the bytes fails, and the first completion reaches Slack but its answer is lost: each chart still
 * arrives once, in the release's thread, after its reply, which is posted once. The image decodes,
 * and it is the one drawn from the AnalysisRun's own measurements and condition.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analysisRunSchema, failingMetrics, type AnalysisRun } from '../../src/model/analysis-run.js';
import { analysisCharts } from '../../src/slack/render/analysis-chart.js';
import { CHART_HEIGHT, CHART_WIDTH, THRESHOLD_COLOR, analysisChartPng, analysisChartSvg } from '../../src/slack/render/analysis-chart-image.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { readPngHeader } from '../slack/support/png.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0CHARTS';
/** The uploaded chart is kept here for a look (docs/analysis-chart.png is a copy of it). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/charts/', import.meta.url));
const STEPS = [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'success-rate' }] } }, { setWeight: 50 }];
const FAILED = ['[0.97]', '[0.95]', '[0.91]', '[0.86]', '[0.82]'];
const INCONCLUSIVE = ['[0.96]', '[0.94]', '[0.93]'];

describe('the chart of a failed or inconclusive analysis in the thread', () => {
  let world: WatchedWorld;
  const sectionText = (m: TranscriptMessage) => m.blocks.flatMap((b) => ((b as { type: string }).type === 'section' ? [(b as { text?: { text?: string } }).text?.text ?? ''] : [])).join('\n') || m.text;
  const thread = (release: string) => world.slack.transcript.messages(CHANNEL).find((m) => m.metadata?.event_payload.release === release);
  const shares = (m: TranscriptMessage | undefined) => (m?.replies ?? []).filter((r) => r.files && r.files.length > 0);

  async function analysisRunOf(rollout: string): Promise<AnalysisRun> {
    const list = (await world.admin().listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', namespace: 'shop', plural: 'analysisruns' })) as { items: unknown[] };
    const runs = list.items.map((i) => analysisRunSchema.parse(i)).filter((r) => r.metadata.ownerReferences?.some((o) => o.name === rollout) && r.status?.phase !== 'Successful');
    expect(runs).toHaveLength(1);
    return runs[0]!;
  }

  beforeAll(async () => {
    world = await startWatchedWorld({
      channel: CHANNEL,
      steps: STEPS,
      // The analysis charts alone: the calls below count their uploads (the release timeline has its own test).
      pipelines: `
  - name: shop
    channel: ${CHANNEL}
    charts: false
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=prod" } }`,
      rollouts: {
        analysisMs: 5_000,
        analysisOutcome: (rollout) => (rollout.metadata.name === 'checkout' ? { phase: 'Failed', values: FAILED } : { phase: 'Inconclusive', values: INCONCLUSIVE }),
      },
    });
    for (const name of ['checkout', 'cart']) world.deploy(name, '1.0.0', 'rel-1');
    await world.runFor(5_000);
    await waitFor(async () => (await world.app.store.get('shop', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    // Slack's upload service fails the first POST of bytes; the first completion shares the file but its answer is lost.
    world.slack.injectFaults('files.upload', 1, { kind: 'http', status: 500 });
    world.slack.injectFaults('files.completeUploadExternal', 1, { kind: 'accepted-then-http', status: 500 });
    for (const name of ['checkout', 'cart']) world.deploy(name, '2.0.0', 'rel-2');
    await world.runFor(15_000);
    await waitFor(async () => (shares(thread('rel-2')).length >= 2 ? true : undefined), 'two charts in the rel-2 thread', 30_000);
    await world.settled();
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  it('each chart arrives once, in the release thread, after its reply, which is posted once; the failed upload and the lost answer were retried', () => {
    // Two charts: one POST of bytes failed (its upload starts over), one completion's answer was lost (the same file is completed again).
    expect(world.slack.calls.get('files.upload')).toBe(3);
    expect(world.slack.calls.get('files.getUploadURLExternal')).toBe(3);
    expect(world.slack.calls.get('files.completeUploadExternal')).toBe(3);
    const rel2 = thread('rel-2')!;
    const files = shares(rel2).flatMap((m) => m.files!);
    expect(files).toHaveLength(2);
    expect(shares(thread('rel-1'))).toHaveLength(0);
    const failedReplies = rel2.replies.filter((r) => sectionText(r).includes('prod/shop/checkout') && sectionText(r).includes('the analysis failed'));
    const pausedReplies = rel2.replies.filter((r) => sectionText(r).includes('prod/shop/cart') && sectionText(r).includes('waits for approval'));
    expect(failedReplies).toHaveLength(1);
    expect(pausedReplies).toHaveLength(1);
    const checkoutShare = shares(rel2).find((m) => m.files!.some((f) => f.altText?.includes('prod/shop/checkout')))!;
    const cartShare = shares(rel2).find((m) => m.files!.some((f) => f.altText?.includes('prod/shop/cart')))!;
    expect(rel2.replies.indexOf(checkoutShare)).toBeGreaterThan(rel2.replies.indexOf(failedReplies[0]!));
    expect(rel2.replies.indexOf(cartShare)).toBeGreaterThan(rel2.replies.indexOf(pausedReplies[0]!));
  });

  it('the image decodes at a sane size, and its alt text says the metric, the values and the condition', () => {
    const rel2 = thread('rel-2')!;
    const [checkout] = shares(rel2).flatMap((m) => m.files!).filter((f) => f.altText?.includes('prod/shop/checkout'));
    expect(readPngHeader(checkout!.bytes)).toMatchObject({ width: CHART_WIDTH, height: CHART_HEIGHT });
    expect(checkout!.altText).toContain('Line chart of analysis metric success-rate (Failed) on prod/shop/checkout: 5 measurements');
    expect(checkout!.altText).toContain('values 0.97, 0.95, 0.91, 0.86, 0.82. Failure condition result[0] < 0.9: drawn as a dashed red line at 0.9.');
    expect(checkout!.name).toBe('analysis-success-rate.png');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(`${ARTIFACTS}analysis-chart.png`, checkout!.bytes);
  });

  it('the chart is drawn from the AnalysisRun: its measured values, their times and its failure condition', async () => {
    for (const [rollout, values] of [['checkout', FAILED], ['cart', INCONCLUSIVE]] as const) {
      const run = await analysisRunOf(rollout);
      const measurements = run.status!.metricResults![0]!.measurements!;
      expect(measurements.map((m) => m.value)).toEqual(values);
      const [chart] = analysisCharts(failingMetrics(run), `prod/shop/${rollout}`);
      expect(chart!.series).toEqual(measurements.map((m) => ({ at: Date.parse(m.finishedAt!), value: Number(m.value!.slice(1, -1)) })));
      expect(chart!.threshold).toEqual({ op: '<', value: 0.9 }); // the run's failureCondition
      expect(run.spec.metrics![0]!.failureCondition).toBe('result[0] < 0.9');
      expect(analysisChartSvg(chart!)).toContain(`stroke="${THRESHOLD_COLOR}"`);
      // What Slack received is exactly that chart's image.
      const uploaded = shares(thread('rel-2')).flatMap((m) => m.files!).find((f) => f.altText?.includes(`prod/shop/${rollout}`))!;
      expect(uploaded.altText).toBe(chart!.altText);
      expect(Buffer.from(await analysisChartPng(chart!)).equals(uploaded.bytes)).toBe(true);
    }
  });
});
