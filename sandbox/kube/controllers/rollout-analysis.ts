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

export type AnalysisOutcome = (rollout: KubeObject, templates: string[]) => { phase: 'Successful' | 'Failed' | 'Error' | 'Inconclusive'; message?: string };

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
      spec: { metrics: templates.map((t) => ({ name: t, provider: { prometheus: { address: 'http://prometheus.monitoring:9090', query: `${t}{rollout="${rollout.metadata.name}"}` } }, successCondition: 'result[0] >= 0.95' })) },
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
        metricResults: templates.map((t) => ({ name: t, phase: outcome.phase, count: 1, ...(outcome.phase === 'Successful' ? { successful: 1 } : outcome.phase === 'Failed' ? { failed: 1 } : {}) })),
      };
    });
  }
  const phase: string = run.status.phase;
  const message: string = run.status.message ?? '';
  return { phase, message, status: { name, status: phase, ...(message ? { message } : {}) } };
}
