/**
 * The image of a release timeline: ECharts' server-side SVG renderer draws a bar per row on a time
 * axis (a custom series of rectangles), the pauses on top of their rows, then resvg turns it into
 * a PNG (svgToPng, as the analysis chart). Pure: the model in, bytes out; times in UTC.
 */
import * as echarts from 'echarts';
import { chartFrame, svgToPng } from './analysis-chart-image.js';
import type { ReleaseTimelineChart, TimelineBarKind, TimelineMark } from './release-timeline.js';

export const TIMELINE_WIDTH = 900;
const ROW_HEIGHT = 30;
const TOP = 84;
const BOTTOM = 56;
/** Bar colours by what the bar shows; tests find a kind of bar by its colour. */
export const TIMELINE_COLORS: Record<TimelineBarKind | TimelineMark['kind'], string> = {
  healthy: '#2ca02c',
  failed: '#d62728',
  running: '#7f7f7f',
  step: '#1f77b4',
  approval: '#ff7f0e',
  pause: '#c7c7c7',
};

export function timelineHeight(chart: ReleaseTimelineChart): number {
  return TOP + Math.max(1, chart.rows.length) * ROW_HEIGHT + BOTTOM;
}

function utcClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

interface RenderApi {
  value(dim: number): number;
  coord(point: [number, number]): [number, number];
  size(point: [number, number]): [number, number];
}

/** A rectangle from `from` to `to` on row `row`; `inset` thins it (a pause drawn inside its row's bar). */
function rect(api: RenderApi, color: string, inset: number, dashed: boolean, label?: string): Record<string, unknown> {
  const [x0, y] = api.coord([api.value(1), api.value(0)]);
  const [x1] = api.coord([api.value(2), api.value(0)]);
  const height = api.size([0, 1])[1] * (1 - inset);
  const width = Math.max(2, x1 - x0);
  return {
    type: 'rect',
    shape: { x: x0, y: y - height / 2, width, height },
    style: { fill: color, stroke: dashed ? '#333333' : color, lineDash: dashed ? [4, 3] : undefined, lineWidth: dashed ? 1 : 0 },
    ...(label ? { textContent: { style: { text: label, fill: '#111111', fontSize: 11 } }, textConfig: { position: 'insideLeft' } } : {}),
  };
}

export function releaseTimelineSvg(chart: ReleaseTimelineChart): string {
  const height = timelineHeight(chart);
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width: TIMELINE_WIDTH, height });
  try {
    const pad = Math.max(1_000, (chart.end - chart.start) * 0.02);
    instance.setOption({
      ...chartFrame(chart),
      grid: { left: 180, right: 32, top: TOP, bottom: BOTTOM - 16 },
      xAxis: { type: 'time', min: chart.start - pad, max: chart.end + pad, axisLabel: { formatter: (ms: number) => utcClock(ms), hideOverlap: true }, name: 'UTC', nameLocation: 'end', splitLine: { show: true, lineStyle: { color: '#eeeeee' } } },
      yAxis: { type: 'category', inverse: true, data: chart.rows.map((r) => (r.kind === 'step' ? `  ${r.label}` : r.label)), axisLabel: { fontSize: 12, fontWeight: 'normal' }, axisTick: { show: false } },
      series: [
        {
          type: 'custom',
          name: 'rows',
          encode: { x: [1, 2], y: 0 },
          data: chart.rows.map((r, i) => [i, r.from, r.to]),
          renderItem: (_params: unknown, api: RenderApi) => rect(api, TIMELINE_COLORS[chart.rows[api.value(0)]!.bar], chart.rows[api.value(0)]!.kind === 'step' ? 0.5 : 0.35, false),
        },
        {
          type: 'custom',
          name: 'holds',
          encode: { x: [1, 2], y: 0 },
          data: chart.marks.map((m) => [m.row, m.from, m.to]),
          renderItem: (params: { dataIndex: number }, api: RenderApi) => {
            const mark = chart.marks[params.dataIndex]!;
            return rect(api, TIMELINE_COLORS[mark.kind], 0.2, mark.kind === 'pause', mark.label);
          },
        },
      ],
    });
    return instance.renderToSVGString();
  } finally {
    instance.dispose();
  }
}

export function releaseTimelinePng(chart: ReleaseTimelineChart): Promise<Uint8Array> {
  return svgToPng(releaseTimelineSvg(chart));
}
