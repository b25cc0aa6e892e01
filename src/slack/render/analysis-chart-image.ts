/**
 * The image of an analysis chart: Apache ECharts' server-side SVG renderer (no DOM, no browser)
 * draws the model, resvg turns the SVG into a PNG. Pure: the model in, bytes out; times are
 * labelled in UTC whatever the server's zone, so the same run draws the same image anywhere.
 */
import { renderAsync } from '@resvg/resvg-js';
import * as echarts from 'echarts';
import { shortNumber, type AnalysisChart } from './analysis-chart.js';

export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 400;
/** The threshold line's colour; tests find the line by it. */
export const THRESHOLD_COLOR = '#d62728';
const SERIES_COLOR = '#1f77b4';

function utcClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * The value axis: it spans the values and the threshold, so the line is always in view, on ticks
 * of 1, 2 or 5 × 10^k (about five), its ends on ticks so no label crowds another.
 */
function valueAxis(chart: AnalysisChart): { min: number; max: number; interval: number } {
  const values = chart.series.map((p) => p.value).concat(chart.threshold ? [chart.threshold.value] : []);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi === lo) [lo, hi] = [lo - (Math.abs(lo) * 0.1 || 1), hi + (Math.abs(hi) * 0.1 || 1)];
  const raw = (hi - lo) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const interval = [1, 2, 5, 10].map((m) => m * magnitude).find((step) => step >= raw)!;
  const tidy = (n: number) => Number(n.toPrecision(12));
  return { min: tidy(Math.floor(lo / interval) * interval), max: tidy(Math.ceil(hi / interval) * interval), interval: tidy(interval) };
}

function thresholdMark(chart: AnalysisChart): Record<string, unknown> | undefined {
  if (!chart.threshold) return undefined;
  const kind = chart.conditionKind === 'success' ? 'pass' : 'fail';
  return {
    silent: true,
    symbol: 'none',
    lineStyle: { color: THRESHOLD_COLOR, type: 'dashed', width: 2 },
    label: { formatter: `${kind} ${chart.threshold.op} ${shortNumber(chart.threshold.value)}`, color: THRESHOLD_COLOR, position: 'insideEndTop' },
    data: [{ yAxis: chart.threshold.value }],
  };
}

/** What every chart Glidepath draws shares: no animation, UTC, a white ground, the image's font, its title and subtitle. */
export function chartFrame(chart: { title: string; subtitle: string }) {
  return {
    animation: false,
    useUTC: true,
    backgroundColor: '#ffffff',
    textStyle: { fontFamily: 'DejaVu Sans, Arial, sans-serif' },
    title: { text: chart.title, subtext: chart.subtitle, left: 16, top: 8, textStyle: { fontSize: 16 }, subtextStyle: { fontSize: 13, color: '#444' } },
  };
}

/** The chart as SVG text. ECharts escapes the label text it writes; the model has already cut it to one short line. */
export function analysisChartSvg(chart: AnalysisChart): string {
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width: CHART_WIDTH, height: CHART_HEIGHT });
  try {
    const axis = valueAxis(chart);
    const mark = thresholdMark(chart);
    const first = chart.series[0]!.at;
    const last = chart.series[chart.series.length - 1]!.at;
    const pad = last > first ? 0 : 30_000;
    instance.setOption({
      ...chartFrame(chart),
      grid: { left: 64, right: 40, top: 80, bottom: 48 },
      xAxis: { type: 'time', min: first - pad, max: last + pad, axisLabel: { formatter: (ms: number) => utcClock(ms), hideOverlap: true }, name: 'UTC', nameLocation: 'end' },
      yAxis: { type: 'value', ...axis, axisLabel: { formatter: (v: number) => shortNumber(v) } },
      series: [
        {
          type: 'line',
          name: chart.metric,
          data: chart.series.map((p) => [p.at, p.value]),
          showSymbol: true,
          symbolSize: 7,
          lineStyle: { color: SERIES_COLOR, width: 2 },
          itemStyle: { color: SERIES_COLOR },
          ...(mark ? { markLine: mark } : {}),
        },
      ],
    });
    return instance.renderToSVGString();
  } finally {
    instance.dispose();
  }
}

/**
 * The SVG as PNG bytes, text drawn with the machine's fonts (none installed: lines and points only).
 * Rasterised on libuv's thread pool (resvg's renderAsync), not on the event loop: a chart is about
 * 100 ms of CPU, and on the loop every request, watch event and job of the process waited behind
 * it (the sandbox missed tsx's 30 ms signal window while drawing its first timeline).
 */
export async function svgToPng(svg: string): Promise<Uint8Array> {
  const image = await renderAsync(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, fitTo: { mode: 'original' } });
  return image.asPng();
}

export function analysisChartPng(chart: AnalysisChart): Promise<Uint8Array> {
  return svgToPng(analysisChartSvg(chart));
}
