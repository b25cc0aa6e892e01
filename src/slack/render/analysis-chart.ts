/**
 * The chart of a failed (or inconclusive) analysis, as data: per failing metric, its measurements
 * over the AnalysisRun's time and the condition they were judged by, with the threshold when the
 * condition is a simple comparison (`result[0] < 0.9`). Pure and bounded: the image is drawn from
 * this model alone (analysis-chart-image.ts), and the alt text says what the image shows.
 */
import { MAX_CHART_POINTS, type FailingMetric } from '../../model/analysis-run.js';
import { utcDay } from '../../time/utc-day.js';

/** Charts per reply: the first failing metrics (a run rarely fails on more). */
export const MAX_CHARTS = 3;
/** Slack shows alt text to screen readers; a long one helps nobody. */
const ALT_TEXT_LIMIT = 1_000;
const VALUES_IN_ALT_TEXT = 10;

export interface ChartThreshold {
  /** The comparison a value is judged by, the value on the right: `result[0] < 0.9` is `<` 0.9. */
  op: '<' | '<=' | '>' | '>=' | '==' | '!=';
  value: number;
}

export interface AnalysisChart {
  metric: string;
  phase: string;
  /** cluster/namespace/Rollout the run measured. */
  where?: string;
  /** Measured values that are numbers, oldest first, with when each was taken (ms). */
  series: { at: number; value: number }[];
  condition?: string;
  conditionKind?: 'failure' | 'success';
  /** Drawn as a line when the condition is a simple comparison of the first result with a number. */
  threshold?: ChartThreshold;
  title: string;
  /** The condition as the image labels it. */
  subtitle: string;
  altText: string;
  /** Safe as a file name: letters, digits, `-`, `_`, `.`. */
  filename: string;
}

const NUMBER = String.raw`[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`;
const RESULT = String.raw`result(?:\s*\[\s*0\s*\])?`;
const LEFT = new RegExp(String.raw`^\s*${RESULT}\s*(<=|>=|==|!=|<|>)\s*(${NUMBER})\s*$`);
const RIGHT = new RegExp(String.raw`^\s*(${NUMBER})\s*(<=|>=|==|!=|<|>)\s*${RESULT}\s*$`);
const FLIPPED: Record<ChartThreshold['op'], ChartThreshold['op']> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };

/** `result[0] < 0.9` (or `result < 0.9`, `0.9 > result[0]`) → `<` 0.9; anything else (`&&`, `len(result)`, functions) → undefined. */
export function simpleThreshold(condition: string | undefined): ChartThreshold | undefined {
  if (!condition || condition.length > 200) return undefined;
  const left = LEFT.exec(condition);
  if (left) return finite({ op: left[1] as ChartThreshold['op'], value: Number(left[2]) });
  const right = RIGHT.exec(condition);
  if (right) return finite({ op: FLIPPED[right[2] as ChartThreshold['op']], value: Number(right[1]) });
  return undefined;
}

function finite(t: ChartThreshold): ChartThreshold | undefined {
  return Number.isFinite(t.value) ? t : undefined;
}

/** A provider's result as text (`[0.82]`, `0.82`, `[0.82 0.7]`): its first number, or undefined. */
export function measuredNumber(value: string): number | undefined {
  const m = new RegExp(String.raw`^\s*\[?\s*(${NUMBER})`).exec(value);
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Label text: one line, no control characters, at most `max` characters (an ellipsis says it was cut). */
export function labelText(text: string, max: number): string {
  const line = Array.from(text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').trim());
  return line.length <= max ? line.join('') : `${line.slice(0, max - 1).join('')}…`;
}

function utcTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** The number as a person reads it: up to 4 significant digits, no float noise. */
export function shortNumber(n: number): string {
  return String(Number(n.toPrecision(4)));
}

function altText(c: Omit<AnalysisChart, 'altText' | 'filename'>): string {
  const first = c.series[0]!;
  const last = c.series[c.series.length - 1]!;
  const shown = c.series.slice(-VALUES_IN_ALT_TEXT).map((p) => shortNumber(p.value));
  const values = c.series.length > VALUES_IN_ALT_TEXT ? `the last ${VALUES_IN_ALT_TEXT}: ${shown.join(', ')}` : shown.join(', ');
  const span = c.series.length === 1 ? `1 measurement at ${utcTime(first.at)} UTC on ${utcDay(first.at)}` : `${c.series.length} measurements from ${utcTime(first.at)} to ${utcTime(last.at)} UTC on ${utcDay(first.at)}`;
  const kind = c.conditionKind === 'success' ? 'Success condition' : 'Failure condition';
  const condition = !c.condition
    ? 'The metric has no condition to draw.'
    : c.threshold
      ? `${kind} ${labelText(c.condition, 120)}: drawn as a dashed red line at ${shortNumber(c.threshold.value)}.`
      : `${kind} ${labelText(c.condition, 120)}: not a simple comparison, so no threshold line is drawn.`;
  const where = c.where ? ` on ${c.where}` : '';
  const text = `Line chart of analysis metric ${c.metric} (${c.phase})${where}: ${span}, values ${values}. ${condition}`;
  return labelText(text, ALT_TEXT_LIMIT);
}

function fileName(metric: string): string {
  const safe = metric.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 60);
  return `analysis-${safe || 'metric'}.png`;
}

/**
 * The charts of a reply's failing metrics: one per metric with at least one numeric measurement,
 * the first MAX_CHARTS of them, the last MAX_CHART_POINTS points each.
 */
export function analysisCharts(metrics: readonly FailingMetric[] | undefined, where?: string): AnalysisChart[] {
  const charts: AnalysisChart[] = [];
  for (const m of metrics ?? []) {
    if (charts.length === MAX_CHARTS) break;
    const series = (m.points ?? [])
      .flatMap((p) => {
        const value = measuredNumber(p.value);
        return value === undefined || !Number.isFinite(p.at) ? [] : [{ at: p.at, value }];
      })
      .slice(-MAX_CHART_POINTS);
    if (series.length === 0) continue;
    const metric = labelText(m.name, 60);
    const phase = labelText(m.phase, 20);
    const shownWhere = where ? labelText(where, 100) : undefined;
    const threshold = simpleThreshold(m.condition);
    const kind = m.conditionKind === 'success' ? 'success condition' : 'failure condition';
    const subtitle = m.condition ? `${kind}: ${labelText(m.condition, 80)}${threshold ? '' : ' (not a simple comparison: no line drawn)'}` : 'no condition';
    const base = {
      metric,
      phase,
      ...(shownWhere ? { where: shownWhere } : {}),
      series,
      ...(m.condition ? { condition: m.condition, conditionKind: m.conditionKind ?? 'failure' } : {}),
      ...(threshold ? { threshold } : {}),
      title: labelText(`${metric} ${phase}${shownWhere ? ` — ${shownWhere}` : ''}`, 100),
      subtitle,
    };
    charts.push({ ...base, altText: altText(base), filename: fileName(metric) });
  }
  return charts;
}
