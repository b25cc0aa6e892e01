/**
 * The phases of one Rollouts-controller reconcile, in the order the controller runs them:
 * a new revision on a pod-template change, abort/retry and promote --full, one step transition,
 * spec.restartAt, then the replica counts and the conditions and phase written to status.
 * Each reads and changes a RolloutPass (rollout-pass.ts).
 */
import { canaryStepText, pauseDurationMs, weightAt } from './canary-steps.js';
import { safeHash } from './hash.js';
import { REVISION_ANNOTATION, type RolloutPass, type StepAnalysisStatus } from './rollout-pass.js';
import { rolloutPhase } from './rollout-status.js';

/** A new pod template (or the first sight of the Rollout) starts a new revision. */
export function beginRevision(pass: RolloutPass): void {
  const { status, steps, canary, podHash } = pass;
  if (!status.currentPodHash) {
    pass.revision = Math.max(pass.revision, 1);
    status.currentPodHash = podHash;
    status.stableRS = podHash;
    if (canary) status.currentStepIndex = steps.length;
    pass.record('RolloutUpdated', `Rollout updated to revision ${pass.revision}`);
    pass.record('RolloutCompleted', `Rollout completed update to revision ${pass.revision} (${podHash}): Initial deploy`);
  } else if (podHash !== status.currentPodHash) {
    pass.revision += 1;
    status.currentPodHash = podHash;
    for (const f of ['abort', 'abortedAt', 'pauseConditions', 'controllerPause', 'promoteFull']) delete status[f];
    if (canary) status.currentStepIndex = podHash === status.stableRS ? steps.length : 0;
    pass.conditions = pass.conditions.filter((c) => !(c.type === 'Progressing' && (c.reason === 'RolloutAborted' || c.reason === 'ProgressDeadlineExceeded')));
    pass.condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${pass.rsName}" is progressing.`);
    pass.record('RolloutUpdated', `Rollout updated to revision ${pass.revision}`);
  }
  pass.annotations[REVISION_ANNOTATION] = String(pass.revision);
  status.currentStepHash = safeHash(steps);
}

/**
 * Abort and retry (`kubectl argo rollouts abort` / `retry` write status.abort), then promote --full.
 * Returns whether this pass retries after an abort.
 */
export function settleAbortAndPromote(pass: RolloutPass): boolean {
  const { status, canary, steps } = pass;
  let retrying = false;
  if (status.abort && pass.fullyPromoted()) {
    delete status.abort;
    delete status.abortedAt;
  } else if (status.abort && !status.abortedAt) {
    pass.markAborted(`Rollout aborted update to revision ${pass.revision}`);
  } else if (!status.abort && status.abortedAt) {
    delete status.abortedAt;
    if (canary) status.currentStepIndex = 0;
    pass.condition('Progressing', 'Unknown', 'RolloutRetry', 'Retrying Rollout after abort');
    retrying = true;
  }
  if (status.promoteFull) {
    if (pass.fullyPromoted()) delete status.promoteFull;
    else {
      if (canary) status.currentStepIndex = steps.length;
      pass.clearPause();
    }
  }
  return retrying;
}

/** Where the new pods are: started at `stepSince`, ready `podReadyMs` later unless they never pull. */
export interface PodProgress {
  unpullable: boolean;
  stepSince: number;
  podsReady: boolean;
  podReadyMs: number;
}

export interface StepAnalysisResult {
  phase: string;
  message: string;
  status: StepAnalysisStatus;
}

/** One step transition per reconcile, as the real controller requeues after each status write. */
export function progressStep(pass: RolloutPass, pods: PodProgress, runAnalysis: (stepIndex: number) => StepAnalysisResult): void {
  const { status, steps, canary, now, nowIso, spec } = pass;
  if (pass.aborted() || pass.pausedBySpec || pass.fullyPromoted() || pass.deadlineExceeded) return;
  const { podsReady, unpullable, stepSince, podReadyMs } = pods;
  const idx = pass.stepIndex();
  const step = canary ? steps[idx] : undefined;
  const completeStep = (): void => {
    status.currentStepIndex = idx + 1;
    pass.record('RolloutStepCompleted', `Rollout step ${idx + 1}/${steps.length} completed (${canaryStepText(step ?? {})})`);
  };
  if (!step) {
    if (podsReady) {
      status.stableRS = pass.podHash;
      delete status.promoteFull;
      pass.record('RolloutCompleted', `Rollout completed update to revision ${pass.revision} (${pass.podHash}): Completed all ${steps.length} canary steps`);
    } else if (!unpullable) pass.wake(stepSince + podReadyMs);
  } else if (step.pause) {
    const duration = pauseDurationMs(step.pause);
    const mine = (status.pauseConditions ?? []).find((p: { reason: string }) => p.reason === 'CanaryPauseStep');
    if (mine) {
      if (duration !== undefined && duration >= 0) {
        const end = Date.parse(mine.startTime) + duration;
        if (now >= end) {
          pass.clearPause();
          completeStep();
        } else pass.wake(end);
      }
    } else if (status.controllerPause) {
      // The user cleared pauseConditions (promote): the controller acknowledges and moves on.
      pass.clearPause();
      pass.record('RolloutResumed', 'Rollout is resumed');
      completeStep();
    } else {
      status.pauseConditions = [{ reason: 'CanaryPauseStep', startTime: nowIso }];
      status.controllerPause = true;
      pass.record('RolloutPaused', 'Rollout is paused (CanaryPauseStep)');
      if (duration !== undefined && duration >= 0) pass.wake(now + duration);
    }
  } else if (step.analysis) {
    const result = runAnalysis(idx);
    pass.analysisStatus = result.status;
    if (result.phase === 'Successful') completeStep();
    else if (result.phase === 'Failed' || result.phase === 'Error') {
      const why = `Rollout aborted update to revision ${pass.revision}: Step-based analysis phase ${result.phase}: ${result.message}`;
      status.abort = true;
      pass.markAborted(why);
    } else if (result.phase === 'Inconclusive') {
      const inconclusive = (status.pauseConditions ?? []).some((p: { reason: string }) => p.reason === 'InconclusiveAnalysisRun');
      if (!inconclusive && status.controllerPause) {
        // Resumed by the user (pauseConditions cleared): the step counts as done.
        delete status.controllerPause;
        completeStep();
      } else if (!inconclusive) {
        status.pauseConditions = [{ reason: 'InconclusiveAnalysisRun', startTime: nowIso }];
        status.controllerPause = true;
        pass.record('RolloutPaused', 'Rollout is paused (InconclusiveAnalysisRun)');
      }
    }
  } else if (podsReady) {
    completeStep();
  } else if (!unpullable) {
    pass.wake(stepSince + podReadyMs);
  }
  // The progress deadline only runs while pods are expected to come up (not during pauses or analysis).
  if (!podsReady && !step?.pause && !step?.analysis) {
    const deadline = stepSince + (spec.progressDeadlineSeconds ?? 600) * 1000;
    if (now >= deadline) {
      pass.deadlineExceeded = true;
      pass.condition('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${pass.rsName}" has timed out progressing.`);
      pass.record('RolloutNotCompleted', `Rollout not completed: ReplicaSet "${pass.rsName}" has timed out progressing.`, 'Warning');
      if (spec.progressDeadlineAbort) status.abort = true;
    } else pass.wake(deadline);
  }
}

/** spec.restartAt: pods are replaced (from `restartSince`), then restartedAt records the request. */
export function applyRestart(pass: RolloutPass, restartSince: () => number, podReadyMs: number): void {
  const { spec, status, now } = pass;
  if (!spec.restartAt || spec.restartAt === status.restartedAt) return;
  const at = Date.parse(spec.restartAt);
  if (at > now) {
    pass.wake(at);
    return;
  }
  const since = restartSince();
  if (now >= since + podReadyMs) {
    status.restartedAt = spec.restartAt;
    pass.record('RolloutRestarted', `Rollout restarted pods older than ${spec.restartAt}`);
  } else pass.wake(since + podReadyMs);
}

/** Replica counts from the current weight, the selector, and status.canary (weights, step analysis). */
export function writeReplicas(pass: RolloutPass, pods: PodProgress): void {
  const { status, steps, canary, replicas, spec, podHash } = pass;
  const idx = pass.stepIndex();
  const promoted = pass.fullyPromoted();
  const stillAborted = pass.aborted();
  const weight = promoted ? 100 : stillAborted ? 0 : canary ? (idx >= steps.length ? 100 : weightAt(steps, idx)) : 100;
  const previousWeight = promoted || stillAborted ? weight : idx === 0 ? 0 : weightAt(steps, idx - 1);
  const trafficRouting = Boolean(canary?.trafficRouting);
  const updated = Math.ceil((replicas * weight) / 100);
  const updatedReady = pods.unpullable ? 0 : pods.podsReady || promoted ? updated : Math.min(updated, Math.ceil((replicas * previousWeight) / 100));
  const stable = promoted ? 0 : trafficRouting ? replicas : replicas - updated;
  status.replicas = stable + updated;
  status.updatedReplicas = updated;
  status.readyReplicas = stable + updatedReady;
  status.availableReplicas = stable + updatedReady;
  status.HPAReplicas = status.replicas;
  status.selector = Object.entries(spec.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
  status.blueGreen = status.blueGreen ?? {};
  // The step analysis status stays until the next revision (the real controller keeps the last one).
  let analysisStatus = pass.analysisStatus;
  if (analysisStatus && !analysisStatus.name.startsWith(`${pass.before.metadata.name}-${podHash}-`)) analysisStatus = undefined;
  status.canary = {
    ...(analysisStatus ? { currentStepAnalysisRunStatus: analysisStatus } : {}),
    ...(trafficRouting
      ? {
          weights: {
            canary: { podTemplateHash: podHash, serviceName: canary?.canaryService, weight: promoted ? 0 : weight },
            stable: { podTemplateHash: status.stableRS, serviceName: canary?.stableService, weight: promoted ? 100 : 100 - weight },
          },
        }
      : {}),
  };
}

/** Conditions, phase and message, and the events a manual pause and its end send (sendStateChangeEvents). */
export function writeConditions(pass: RolloutPass, retrying: boolean): void {
  const { status, replicas, spec, before } = pass;
  const promoted = pass.fullyPromoted();
  const stillAborted = pass.aborted();
  const paused = pass.pausedBySpec || (status.pauseConditions ?? []).length > 0;
  const available = status.availableReplicas >= replicas - Math.floor(replicas / 4);
  pass.condition('Available', available ? 'True' : 'False', 'AvailableReason', available ? 'Rollout has minimum availability' : 'Rollout does not have minimum availability');
  if (!stillAborted && !pass.deadlineExceeded && !retrying) {
    if (paused) pass.condition('Progressing', 'Unknown', 'RolloutPaused', 'Rollout is paused');
    else if (promoted && status.availableReplicas >= replicas) {
      pass.condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${pass.rsName}" has successfully progressed.`);
    } else pass.condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${pass.rsName}" is progressing.`);
  }
  // checkPausedConditions skips when an abort condition exists, which leaves Paused stale.
  const abortCondition = pass.conditions.some((c) => c.reason === 'RolloutAborted');
  if (!abortCondition && (paused || pass.conditions.some((c) => c.type === 'Paused'))) {
    pass.condition('Paused', paused ? 'True' : 'False', 'RolloutPaused', 'Rollout is paused');
  }
  pass.condition('Completed', promoted ? 'True' : 'False', 'RolloutCompleted', 'RolloutCompleted');
  const healthy = promoted && !paused && status.availableReplicas >= replicas && status.updatedReplicas >= replicas;
  pass.condition('Healthy', healthy ? 'True' : 'False', 'RolloutHealthy', healthy ? 'Rollout is healthy' : 'Rollout is not healthy');
  status.conditions = pass.conditions;
  status.observedGeneration = String(before.metadata.generation);
  const { phase, message } = rolloutPhase({
    conditions: pass.conditions,
    specPaused: pass.pausedBySpec,
    pauseConditions: status.pauseConditions ?? [],
    restartAt: spec.restartAt,
    restartedAt: status.restartedAt,
    specReplicas: replicas,
    updatedReplicas: status.updatedReplicas,
    availableReplicas: status.availableReplicas,
    replicas: status.replicas,
    trafficRouting: Boolean(pass.canary?.trafficRouting),
    fullyPromoted: promoted,
  });
  status.phase = phase;
  if (message) status.message = message;
  else delete status.message;
  const wasPaused = before.status?.phase === 'Paused';
  if (phase === 'Paused' && !wasPaused && !pass.recorded('RolloutPaused')) pass.record('RolloutPaused', `Rollout is paused (${message})`);
  if (wasPaused && phase !== 'Paused' && !pass.recorded('RolloutResumed') && !stillAborted) pass.record('RolloutResumed', 'Rollout is resumed');
}
