/**
 * AnalysisRuns, as Glidepath reads them: through the Rollout that owns them. A Rollout's status
 * names its current step's run (`status.canary.currentStepAnalysisRunStatus`) and, for blue-green,
 * its pre- and post-promotion runs, each as `{name, status, message}` (RolloutAnalysisRunStatus).
 * Glidepath never reads AnalysisRun objects themselves.
 */
import { z } from 'zod';
import { record, str } from './json.js';
import { text } from './meta.js';

/** `RolloutAnalysisRunStatus`: the summary of one AnalysisRun kept in the Rollout's status. */
export const analysisRunStatusSchema = z.looseObject({
  name: text(253).optional(),
  status: text(64).optional(),
  message: text(4096).optional(),
});
export type AnalysisRunStatus = z.infer<typeof analysisRunStatusSchema>;

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
