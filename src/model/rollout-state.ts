/**
 * Judges an Argo Rollout's state from one observation of it (a webhook body or a watch object).
 * Pure: the reducer calls it on every Rollout fact, so it never throws on an odd object and
 * never reads anything but its arguments.
 *
 * - `phase`/`message` are what the Rollouts client computes (kubectl-argo-rollouts, the
 *   dashboard): the controller's own phase when the object has one, the controller's rules
 *   recomputed from conditions and counts when it does not (v0.x Rollouts).
 * - `argoHealth` is what the Argo CD UI shows for the same object.
 * - `pause` says whether a person is awaited; the `Paused` condition is never read, because the
 *   controller leaves it True after an abort.
 */
import { COMPLETED_ANALYSIS_PHASES, stepAnalysisOf, type StepAnalysis } from './analysis-run.js';
import { argoCdRolloutHealth, type ArgoHealth } from './rollout-argo-health.js';
import { rolloutActions, type RolloutActions } from './rollout-actions.js';
import { atoi, num, record, str } from './json.js';
import { generationOf, partsOf, type CanaryStep, type Rollout, type RolloutParts, type RolloutPhase } from './rollout.js';
import { canaryStepLabel, stepWeight } from './rollout-steps.js';

export type { Rollout, CanaryStep } from './rollout.js';
export type { ArgoHealth, ArgoHealthStatus } from './rollout-argo-health.js';
export { argoCdRolloutHealth } from './rollout-argo-health.js';
export type { RolloutActions, RolloutActionName, RolloutActionPatches } from './rollout-actions.js';
export { rolloutActions, rolloutActionPatch } from './rollout-actions.js';
export { canaryStepLabel } from './rollout-steps.js';

export interface RolloutState {
  /** Rule A: the controller has observed `metadata.generation` (a pre-v0.10 hash counts as observed). */
  observed: boolean;
  phase: RolloutPhase;
  message: string;
  argoHealth: ArgoHealth;
  /** Present while a person is awaited: a pause condition, or a manual pause (`spec.paused`). */
  pause?: { reason: string; since?: string };
  aborted: boolean;
  abortedAt?: string;
  /**
   * Canary step position: `index` 0-based, `index === count` when every step is done. `count` and
   * `label` are missing when the steps are unknown (webhook bodies carry no `spec.strategy`).
   */
  step?: { index: number; count?: number; label?: string };
  /** Percent of traffic meant for the new version (canary only), when it can be told. */
  weight?: number;
  /** The stable ReplicaSet is the desired one: nothing is being rolled out. */
  fullyPromoted: boolean;
  podHash?: string;
  stableHash?: string;
  /** The current step's AnalysisRun, when there is one. */
  analysis?: StepAnalysis;
  /** The actions Argo CD would offer on this object. */
  actions: RolloutActions;
}

export interface RolloutStateContext {
  /** Canary steps from an earlier full object, used when this one carries no `spec.strategy`. */
  steps?: readonly CanaryStep[];
}

const PHASES: ReadonlySet<string> = new Set(['Healthy', 'Progressing', 'Paused', 'Degraded']);

interface Judgement {
  phase: RolloutPhase;
  message: string;
}

function isObserved(rollout: Rollout, parts: RolloutParts): boolean {
  const raw = parts.status?.observedGeneration;
  if (raw === undefined || raw === null || raw === '') return false;
  const observed = atoi(raw);
  if (observed === undefined) return true; // a pre-v0.10 pod-template-like hash
  // An all-digit pre-v0.10 hash is (almost surely) larger than the generation.
  return observed >= (generationOf(rollout) ?? 0);
}

function isWorkloadObserved(parts: RolloutParts): boolean {
  if (parts.spec.workloadRef === undefined || parts.spec.workloadRef === null) return true;
  const wanted = atoi(record(parts.metadata.annotations)?.['rollout.argoproj.io/workload-generation']);
  const seen = atoi(parts.status?.workloadObservedGeneration);
  return wanted === undefined || seen === undefined || wanted === seen;
}

function sameInstant(a: string, b: string): boolean {
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  return Number.isNaN(ta) || Number.isNaN(tb) ? a === b : ta === tb;
}

function stableHashOf(parts: RolloutParts): string | undefined {
  // Before v0.8 the stable hash was status.canary.stableRS.
  return str(parts.status?.stableRS) ?? str(parts.statusCanary?.stableRS);
}

/**
 * The controller's rules, for Rollouts whose status has no phase (controllers before v1.0). Where
 * those old objects lack a field the rules assume (the stable hash, before v0.8), Argo CD's
 * reading is used, so both judgements agree on them.
 */
function calculatePhase(parts: RolloutParts): Judgement {
  const { spec, status = {}, blueGreen, canary, statusBlueGreen, conditions, pauseConditions } = parts;
  for (const entry of conditions) {
    const condition = record(entry);
    if (!condition) continue;
    const message = str(condition.message) ?? '';
    if (condition.type === 'InvalidSpec') return { phase: 'Degraded', message: `InvalidSpec: ${message}` };
    if (condition.reason === 'RolloutAborted' || condition.reason === 'ProgressDeadlineExceeded') {
      return { phase: 'Degraded', message: `${condition.reason}: ${message}` };
    }
  }
  if (spec.paused === true) return { phase: 'Paused', message: 'manually paused' };
  if (pauseConditions.length > 0) return { phase: 'Paused', message: str(record(pauseConditions[0])?.reason) ?? '' };

  const restartAt = str(spec.restartAt);
  const restartedAt = str(status.restartedAt);
  if (restartAt !== undefined && (restartedAt === undefined || !sameInstant(restartAt, restartedAt))) {
    return { phase: 'Progressing', message: 'rollout is restarting' };
  }
  const updated = num(status.updatedReplicas) ?? 0;
  if (updated < (num(spec.replicas) ?? 1)) return { phase: 'Progressing', message: 'more replicas need to be updated' };
  if ((num(status.availableReplicas) ?? 0) < updated) {
    return { phase: 'Progressing', message: 'updated replicas are still becoming available' };
  }

  const current = str(status.currentPodHash) ?? '';
  const stable = stableHashOf(parts) ?? '';
  if (blueGreen) {
    const active = str(statusBlueGreen?.activeSelector) ?? '';
    if (active === '' || active !== current) return { phase: 'Progressing', message: 'active service cutover pending' };
    // Before v0.8 blue-green had no stable hash at all; like Argo CD, the active service decides then.
    if (stable !== '' && stable !== current) {
      const post = str(record(statusBlueGreen?.postPromotionAnalysisRunStatus)?.status);
      const analysisPending =
        blueGreen.postPromotionAnalysis !== undefined &&
        blueGreen.postPromotionAnalysis !== null &&
        !COMPLETED_ANALYSIS_PHASES.has(post ?? '');
      return analysisPending
        ? { phase: 'Progressing', message: 'waiting for analysis to complete' }
        : { phase: 'Progressing', message: 'waiting for post-promotion verification to complete' };
    }
  } else if (canary) {
    const basicCanary = canary.trafficRouting === undefined || canary.trafficRouting === null;
    // Traffic-routed canaries keep old pods on purpose (scale-down delay).
    if (basicCanary && (num(status.replicas) ?? 0) > updated) {
      return { phase: 'Progressing', message: 'old replicas are pending termination' };
    }
    if (stable === '' || stable !== current) return { phase: 'Progressing', message: 'waiting for all steps to complete' };
  }
  return { phase: 'Healthy', message: '' };
}

/** What the Rollouts client shows: it distrusts the status until the controller has caught up. */
function judgePhase(observed: boolean, parts: RolloutParts): Judgement {
  const status = parts.status;
  if (!observed || !status) return { phase: 'Progressing', message: 'waiting for rollout spec update to be observed' };
  if (status.controllerPause === true && parts.pauseConditions.length === 0) {
    return { phase: 'Progressing', message: 'waiting for rollout to unpause' };
  }
  if (!isWorkloadObserved(parts)) {
    return { phase: 'Progressing', message: 'waiting for rollout spec update to be observed for the reference workload' };
  }
  const phase = status.phase;
  if (phase === undefined || phase === null || phase === '') return calculatePhase(parts);
  const message = str(status.message) ?? '';
  if (typeof phase === 'string' && PHASES.has(phase)) return { phase: phase as RolloutPhase, message };
  return { phase: 'Unknown', message: message || `unrecognised phase ${JSON.stringify(phase)}` };
}

function judgePause(parts: RolloutParts, judged: Judgement, aborted: boolean): RolloutState['pause'] {
  if (aborted) return undefined;
  const first = record(parts.pauseConditions[0]);
  if (first) {
    const since = str(first.startTime);
    return { reason: str(first.reason) || 'paused', ...(since ? { since } : {}) };
  }
  if (parts.spec.paused === true) return { reason: 'manually paused' };
  // Webhook bodies carry no spec.paused; a manual pause then shows only in the phase.
  if (judged.phase === 'Paused') return { reason: judged.message || 'paused' };
  return undefined;
}

function judgeStep(parts: RolloutParts, steps: readonly unknown[] | undefined): RolloutState['step'] {
  if (parts.blueGreen || !parts.status) return undefined;
  const raw = num(parts.status?.currentStepIndex);
  if (steps && steps.length > 0) {
    // A missing index means the first step; an index past the end (steps edited) means done.
    const index = Math.min(Math.max(raw ?? 0, 0), steps.length);
    const label = index < steps.length ? canaryStepLabel(steps[index]) : undefined;
    return { index, count: steps.length, ...(label ? { label } : {}) };
  }
  if (!steps && raw !== undefined && raw >= 0) return { index: raw };
  return undefined;
}

function judgeWeight(
  parts: RolloutParts,
  steps: readonly unknown[] | undefined,
  step: RolloutState['step'],
  fullyPromoted: boolean,
  aborted: boolean,
): number | undefined {
  const reported = num(record(record(parts.statusCanary?.weights)?.canary)?.weight);
  const canary = parts.canary !== undefined || (parts.strategy === undefined && (reported !== undefined || step !== undefined));
  if (!canary) return undefined;
  if (fullyPromoted) return 100;
  if (reported !== undefined) return reported;
  if (aborted) return 0;
  if (steps && steps.length > 0 && step) return stepWeight(steps, step.index);
  // A canary without steps sends everything to the new version at once: `kubectl argo rollouts get`
  // shows weight 100 (GetCurrentSetWeight: no current step ⇒ 100). Only a full object can say it
  // has no steps; a webhook body without spec.strategy cannot. Before any pod hash there is no version to weigh.
  const rolling = str(parts.status?.currentPodHash) !== undefined;
  if (parts.canary && rolling && (steps === undefined || steps.length === 0) && parts.strategy !== undefined) return 100;
  return undefined;
}

export function deriveRolloutState(rollout: Rollout, context: RolloutStateContext = {}): RolloutState {
  const parts = partsOf(rollout);
  const status = parts.status;
  const observed = isObserved(rollout, parts);
  const judged = judgePhase(observed, parts);
  const aborted = status?.abort === true;
  const abortedAt = aborted ? str(status?.abortedAt) : undefined;
  const podHash = str(status?.currentPodHash);
  const stableHash = stableHashOf(parts);
  const fullyPromoted = podHash !== undefined && podHash === stableHash;
  const steps = parts.strategy ? parts.steps : (parts.steps ?? context.steps);
  const step = judgeStep(parts, steps);
  const weight = judgeWeight(parts, steps, step, fullyPromoted, aborted);
  const pause = judgePause(parts, judged, aborted);
  const analysis = stepAnalysisOf(parts.statusCanary);

  return {
    observed,
    phase: judged.phase,
    message: judged.message,
    argoHealth: argoCdRolloutHealth(rollout),
    ...(pause ? { pause } : {}),
    aborted,
    ...(abortedAt ? { abortedAt } : {}),
    ...(step ? { step } : {}),
    ...(weight !== undefined ? { weight } : {}),
    fullyPromoted,
    ...(podHash ? { podHash } : {}),
    ...(stableHash ? { stableHash } : {}),
    ...(analysis ? { analysis } : {}),
    actions: rolloutActions(rollout),
  };
}
