/**
 * The analysis chart, pure: the model is drawn from the failing metric's own measurements and
 * condition, the threshold only for a simple comparison, everything bounded and escaped; the SVG
 * draws the threshold line; the PNG decodes at the size drawn.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CHART_POINTS, type FailingMetric } from '../../../src/model/analysis-run.js';
import { MAX_CHARTS, analysisCharts, measuredNumber, simpleThreshold } from '../../../src/slack/render/analysis-chart.js';
import { CHART_HEIGHT, CHART_WIDTH, THRESHOLD_COLOR, analysisChartPng, analysisChartSvg } from '../../../src/slack/render/analysis-chart-image.js';
import { readPngHeader } from '../support/png.js';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const metric = (over: Partial<FailingMetric> = {}): FailingMetric => ({
  name: 'success-rate',
  phase: 'Failed',
  values: ['[0.86]', '[0.82]'],
  condition: 'result[0] < 0.9',
  conditionKind: 'failure',
  points: ['[0.97]', '[0.95]', '[0.91]', '[0.86]', '[0.82]'].map((value, i) => ({ at: T0 + i * 60_000, value })),
  ...over,
});

describe('the chart model of a failing metric', () => {
  it('is the measurements over time and the condition, its threshold drawn', () => {
    const [chart] = analysisCharts([metric()], 'prod/shop/checkout');
    expect(chart!.series).toEqual([0.97, 0.95, 0.91, 0.86, 0.82].map((value, i) => ({ at: T0 + i * 60_000, value })));
    expect(chart!.threshold).toEqual({ op: '<', value: 0.9 });
    expect(chart!.altText).toBe(
      'Line chart of analysis metric success-rate (Failed) on prod/shop/checkout: 5 measurements from 10:00:00 to 10:04:00 UTC on 2026-12-01, values 0.97, 0.95, 0.91, 0.86, 0.82. Failure condition result[0] < 0.9: drawn as a dashed red line at 0.9.',
    );
  });

  it('reads a threshold only from a simple comparison of the first result with a number', () => {
    expect(simpleThreshold('result[0] >= 0.95')).toEqual({ op: '>=', value: 0.95 });
    expect(simpleThreshold('result < 1e-3')).toEqual({ op: '<', value: 0.001 });
    expect(simpleThreshold('0.9 > result[0]')).toEqual({ op: '<', value: 0.9 });
    for (const not of ['len(result) == 0 || result[0] < 0.9', 'result[1] < 0.9', 'result[0] < x', 'isNaN(result[0])', '', undefined]) expect(simpleThreshold(not)).toBeUndefined();
    expect(measuredNumber('[0.82 0.5]')).toBe(0.82);
    expect(measuredNumber('{"a": 1}')).toBeUndefined();
  });

  it('says so when the condition draws no line, and the SVG has none', () => {
    const [chart] = analysisCharts([metric({ condition: 'len(result) == 0 || result[0] < 0.9' })]);
    expect(chart!.threshold).toBeUndefined();
    expect(chart!.altText).toContain('not a simple comparison, so no threshold line is drawn');
    expect(analysisChartSvg(chart!)).not.toContain(THRESHOLD_COLOR);
  });

  it('is bounded: at most MAX_CHARTS charts, MAX_CHART_POINTS points, short one-line labels, metrics with no number left out', () => {
    const points = Array.from({ length: 100 }, (_, i) => ({ at: T0 + i * 1_000, value: `[${i}]` }));
    const metrics = [metric({ name: 'no-numbers', points: [{ at: T0, value: 'error' }] }), ...Array.from({ length: 8 }, (_, i) => metric({ name: `m${i}\n${'x'.repeat(500)}`, points }))];
    const charts = analysisCharts(metrics, 'w'.repeat(500));
    expect(charts).toHaveLength(MAX_CHARTS);
    expect(charts[0]!.metric.startsWith('m0 x')).toBe(true);
    for (const c of charts) {
      expect(c.series).toHaveLength(MAX_CHART_POINTS);
      expect(c.series[0]!.value).toBe(100 - MAX_CHART_POINTS);
      expect(Array.from(c.title).length).toBeLessThanOrEqual(100);
      expect(c.title).not.toContain('\n');
      expect(c.altText.length).toBeLessThanOrEqual(1_000);
      expect(c.filename).toMatch(/^analysis-[A-Za-z0-9_.-]+\.png$/);
    }
  });
});

describe('the chart image', () => {
  it('the SVG draws the threshold line and the points, and escapes what the provider named', () => {
    const [chart] = analysisCharts([metric({ name: 'rate<script>alert(1)</script>', condition: 'result[0] < 0.9 && "<b>"' })], '<img src=x>');
    const svg = analysisChartSvg(chart!);
    expect(svg).not.toMatch(/<script|<img|<b>/);
    const [withLine] = analysisCharts([metric()]);
    expect(analysisChartSvg(withLine!)).toContain(`stroke="${THRESHOLD_COLOR}"`);
  });

  it('the PNG decodes, at the size drawn', async () => {
    const [chart] = analysisCharts([metric()]);
    const png = await analysisChartPng(chart!);
    expect(readPngHeader(png)).toMatchObject({ width: CHART_WIDTH, height: CHART_HEIGHT, bitDepth: 8 });
    expect(png.length).toBeGreaterThan(5_000); // lines, points and text, not a blank canvas
    expect(Buffer.from(await analysisChartPng(chart!)).equals(Buffer.from(png))).toBe(true); // the same run draws the same image
  });
});
