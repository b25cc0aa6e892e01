/**
 * AnalysisRuns, as Glidepath reads them. A Rollout's status names its current step's run
 * (`status.canary.currentStepAnalysisRunStatus`) and, for blue-green, its pre- and post-promotion
 * runs, each as `{name, status, message}` (RolloutAnalysisRunStatus). When that run failed or was
 * inconclusive, the AnalysisRun object itself (CRD argoproj.io/v1alpha1 AnalysisRun) says which
 * metric failed, on which measured values, against which condition.
 */
import { z } from 'zod';
import { list, record, str } from './json.js';
import { ARGOPROJ, clusterObjectMetaSchema, cutText, ident, integer, longText, ofType, opt } from './meta.js';

/** `RolloutAnalysisRunStatus`: the summary of one AnalysisRun kept in the Rollout's status. */
export const analysisRunStatusSchema = z.looseObject({
  name: ident(253).optional(),
  status: ident(64).optional(),
  message: cutText(4096).optional(),
});

/** The AnalysisRun phases after which the run no longer changes (`AnalysisPhase.Completed()`). */
export const COMPLETED_ANALYSIS_PHASES: ReadonlySet<string> = new Set(['Successful', 'Failed', 'Error', 'Inconclusive']);

export interface StepAnalysis {
  name: string;
  status: string;
  message?: string;
}

/**
 * The current canary step's AnalysisRun from `status.canary` (any shape: the judgements never
 * throw), or undefined when there is none.
 */
export function stepAnalysisOf(statusCanary: unknown): StepAnalysis | undefined {
  const run = record(record(statusCanary)?.currentStepAnalysisRunStatus);
  const name = str(run?.name);
  const status = str(run?.status);
  if (!run || (!name && !status)) return undefined;
  const message = str(run.message);
  return { name: name ?? '', status: status ?? '', ...(message ? { message } : {}) };
}

/**
 * One measurement of a metric (`status.metricResults[].measurements[]`): `value` is the provider's
 * result as text, e.g. `[0.82]`, shown to a person and never compared, so it is cut like a message.
 */
export const measurementSchema = z.looseObject({
  phase: ident(64),
  value: opt(longText),
  message: opt(longText),
  startedAt: opt(ident(64)),
  finishedAt: opt(ident(64)),
});

export const metricResultSchema = z.looseObject({
  name: ident(253),
  phase: ident(64),
  message: opt(longText),
  count: opt(integer),
  successful: opt(integer),
  failed: opt(integer),
  inconclusive: opt(integer),
  error: opt(integer),
  measurements: opt(z.array(measurementSchema).max(1_000)),
});

/**
 * An AnalysisRun: the metrics it runs (with their conditions) and what each measured. The
 * conditions are expressions a person reads beside the values, so they are cut like messages.
 */
export const analysisRunSchema = ofType(
  { kind: 'AnalysisRun', apiVersions: ARGOPROJ },
  z.looseObject({
    metadata: clusterObjectMetaSchema,
    spec: z.looseObject({
      metrics: opt(
        z
          .array(z.looseObject({ name: ident(253), successCondition: opt(longText), failureCondition: opt(longText), failureLimit: opt(z.union([integer, ident(64)])), inconclusiveLimit: opt(z.union([integer, ident(64)])) }))
          .max(1_000),
      ),
    }),
    status: opt(z.looseObject({ phase: opt(ident(64)), message: opt(longText), metricResults: opt(z.array(metricResultSchema).max(1_000)) })),
  }),
);
export type AnalysisRun = z.infer<typeof analysisRunSchema>;

/** A metric that made a run fail or end inconclusive: its last measured values, and the condition they were judged by. */
export interface FailingMetric {
  name: string;
  /** Failed, Inconclusive or Error. */
  phase: string;
  /** The last few measured values, oldest first (empty when the provider returned none, e.g. on errors). */
  values: string[];
  /** `failureCondition` when the metric has one, else the `successCondition` the values did not meet. */
  condition?: string;
  conditionKind?: 'failure' | 'success';
  /** The metric's or its last measurement's message (an error's reason). */
  message?: string;
  /**
   * The measurements over the run's time, oldest first, for the chart (src/slack/render/analysis-chart.ts):
   * when each finished (ms; else when it started) and its value as text. The last 30 with a value and a time.
   */
  points?: MeasuredPoint[];
}

export interface MeasuredPoint {
  at: number;
  value: string;
}

/** The phases of a run that a person must hear the reasons of. */
export const FAILING_ANALYSIS_PHASES: ReadonlySet<string> = new Set(['Failed', 'Error', 'Inconclusive']);

const MAX_METRICS = 10;
const MAX_VALUES = 5;
/** Points a chart draws per metric: a run's usual count (a few to a few dozen) fits; the record stays small. */
export const MAX_CHART_POINTS = 30;

function pointsOf(measurements: Record<string, unknown>[]): MeasuredPoint[] {
  const points: MeasuredPoint[] = [];
  for (const m of measurements) {
    const value = str(m.value);
    const at = Date.parse(str(m.finishedAt) ?? str(m.startedAt) ?? '');
    if (value && Number.isFinite(at)) points.push({ at, value: value.slice(0, 120) });
  }
  return points.slice(-MAX_CHART_POINTS);
}

/**
 * The metrics of a run that failed, errored or were inconclusive, with what they measured and the
 * condition, bounded (10 metrics, the last 5 values each). Any shape in: never throws.
 */
export function failingMetrics(run: unknown): FailingMetric[] {
  const spec = list(record(record(run)?.spec)?.metrics).map(record);
  const results = list(record(record(run)?.status)?.metricResults).map(record);
  const out: FailingMetric[] = [];
  for (const result of results) {
    const name = str(result?.name);
    const phase = str(result?.phase);
    if (!result || !name || !phase || !FAILING_ANALYSIS_PHASES.has(phase)) continue;
    const measurements = list(result.measurements).map(record).filter((m) => m !== undefined);
    const values = measurements.map((m) => str(m.value)).filter((v): v is string => v !== undefined && v !== '').slice(-MAX_VALUES);
    const metric = spec.find((m) => str(m?.name) === name);
    const failure = str(metric?.failureCondition);
    const success = str(metric?.successCondition);
    const lastMessage = [...measurements].reverse().map((m) => str(m.message)).find((m) => m);
    const message = str(result.message) || lastMessage;
    const points = pointsOf(measurements);
    out.push({
      name,
      phase,
      values,
      ...(failure ? { condition: failure, conditionKind: 'failure' as const } : success ? { condition: success, conditionKind: 'success' as const } : {}),
      ...(message ? { message } : {}),
      ...(points.length > 0 ? { points } : {}),
    });
    if (out.length === MAX_METRICS) break;
  }
  return out;
}
