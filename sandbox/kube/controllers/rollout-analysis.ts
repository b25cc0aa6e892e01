/**
 * Step analyses of the Rollouts simulator: the step's AnalysisRun is created on first sight and
 * completed after the analysis duration with the configured outcome (the fault switch for failed
 * and inconclusive analyses).
 */
import { isoSeconds } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore } from '../store.js';
import type { StepAnalysisResult } from './rollout-reconcile.js';

/**
 * `value`: what the provider measured (Prometheus: a vector as text, e.g. `[0.82]`); by default one
 * that fits the phase. `values`: several measurements instead, spread evenly over the analysis (a
 * metric with `count` and `interval`), the last one deciding.
 */
export type AnalysisOutcome = (rollout: KubeObject, templates: string[]) => { phase: 'Successful' | 'Failed' | 'Error' | 'Inconclusive'; message?: string; value?: string; values?: string[] };

/** Against `result[0] >= 0.95` / `result[0] < 0.9`: a value that is judged the given phase. */
const VALUE_OF: Record<string, string | undefined> = { Successful: '[0.99]', Failed: '[0.82]', Inconclusive: '[0.93]', Error: undefined };
const ERROR_MESSAGE = 'Post "http://prometheus.monitoring:9090/api/v1/query": dial tcp 10.96.0.12:9090: connect: connection refused';

export interface StepAnalysisRun {
  store: ObjectStore;
  analysisRt: ResourceType;
  rollout: KubeObject;
  name: string;
  stepIndex: number;
  podHash: string;
  now: number;
  analysisMs: number;
  outcome?: AnalysisOutcome;
  wake: (at: number) => void;
}

/** Measurements taken at even intervals from `start` to `end`; the earlier ones passed, the last is judged `phase`. */
function seriesOf(values: string[], start: number, end: number, phase: string): Record<string, string>[] {
  const step = values.length > 1 ? (end - start) / (values.length - 1) : 0;
  return values.map((value, i) => {
    const at = isoSeconds(values.length > 1 ? start + step * i : end);
    return { phase: i === values.length - 1 ? phase : 'Successful', startedAt: at, finishedAt: at, value };
  });
}

export function runStepAnalysis(a: StepAnalysisRun): StepAnalysisResult {
  const { store, analysisRt, rollout, name, now } = a;
  const ns = rollout.metadata.namespace;
  const step = rollout.spec.strategy.canary.steps[a.stepIndex].analysis as { templates?: { templateName: string }[] };
  const templates = (step.templates ?? []).map((t) => t.templateName);
  let run = store.tryGet(analysisRt, ns, name);
  if (!run) {
    run = store.create(analysisRt, ns, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisRun',
      metadata: {
        name,
        labels: { 'rollout-type': 'Step', 'step-index': String(a.stepIndex), 'rollouts-pod-template-hash': a.podHash },
        ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: rollout.metadata.name, uid: rollout.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: { metrics: templates.map((t) => ({ name: t, provider: { prometheus: { address: 'http://prometheus.monitoring:9090', query: `${t}{rollout="${rollout.metadata.name}"}` } }, successCondition: 'result[0] >= 0.95', failureCondition: 'result[0] < 0.9' })) },
      status: { phase: 'Running', startedAt: isoSeconds(now) },
    });
  }
  const runStatus = run.status ?? {};
  if (runStatus.phase === 'Running') {
    const due = Date.parse(runStatus.startedAt) + a.analysisMs;
    if (now < due) {
      a.wake(due);
      return { phase: 'Running', message: '', status: { name, status: 'Running' } };
    }
    const outcome = a.outcome?.(rollout, templates) ?? { phase: 'Successful' };
    const message = outcome.message ?? (outcome.phase === 'Successful' ? '' : `metric "${templates[0] ?? 'analysis'}" assessed ${outcome.phase}`);
    run = store.mutate(analysisRt, ns, name, (r) => {
      r.status = {
        phase: outcome.phase,
        startedAt: runStatus.startedAt,
        completedAt: isoSeconds(now),
        ...(message ? { message } : {}),
        // One measurement per metric, as the controller keeps them (value as text, phase, times).
        metricResults: templates.map((t) => {
          const value = outcome.value ?? VALUE_OF[outcome.phase];
          const measurement = {
            phase: outcome.phase,
            startedAt: runStatus.startedAt,
            finishedAt: isoSeconds(now),
            ...(value !== undefined ? { value } : {}),
            ...(outcome.phase === 'Error' ? { message: ERROR_MESSAGE } : {}),
          };
          const counter = { Successful: 'successful', Failed: 'failed', Inconclusive: 'inconclusive', Error: 'error' }[outcome.phase];
          const measurements = outcome.values ? seriesOf(outcome.values, Date.parse(runStatus.startedAt), now, outcome.phase) : [measurement];
          return { name: t, phase: outcome.phase, count: measurements.length, [counter]: 1, measurements, ...(outcome.phase === 'Error' ? { message: ERROR_MESSAGE } : {}) };
        }),
      };
    });
  }
  const phase: string = run.status.phase;
  const message: string = run.status.message ?? '';
  return { phase, message, status: { name, status: phase, ...(message ? { message } : {}) } };
}
