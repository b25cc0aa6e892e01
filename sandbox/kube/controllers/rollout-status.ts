/**
 * Pieces of Rollout status as the real controller computes them (argo-rollouts
 * utils/rollout/rolloututil.go and utils/conditions), kept pure so they can be tested alone.
 */
export interface RolloutCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastUpdateTime: string;
  lastTransitionTime: string;
}

/** Sets a condition; unchanged ones keep their times, changed ones move to the end of the list. */
export function setCondition(
  conditions: RolloutCondition[],
  type: string,
  status: RolloutCondition['status'],
  reason: string,
  message: string,
  now: string,
): RolloutCondition[] {
  const existing = conditions.find((c) => c.type === type);
  if (existing && existing.status === status && existing.reason === reason && existing.message === message) return conditions;
  const next: RolloutCondition = {
    type,
    status,
    reason,
    message,
    lastUpdateTime: now,
    lastTransitionTime: existing && existing.status === status ? existing.lastTransitionTime : now,
  };
  return [...conditions.filter((c) => c.type !== type), next];
}

export interface PhaseInput {
  conditions: RolloutCondition[];
  specPaused: boolean;
  pauseConditions: { reason: string }[];
  restartAt?: string;
  restartedAt?: string;
  specReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  replicas: number;
  trafficRouting: boolean;
  fullyPromoted: boolean;
}

/** CalculateRolloutPhase, first match wins (argo-rollouts utils/rollout CalculateRolloutPhase). */
export function rolloutPhase(s: PhaseInput): { phase: string; message: string } {
  const invalid = s.conditions.find((c) => c.type === 'InvalidSpec');
  if (invalid) return { phase: 'Degraded', message: `InvalidSpec: ${invalid.message}` };
  const failed = s.conditions.find((c) => c.reason === 'RolloutAborted' || c.reason === 'ProgressDeadlineExceeded');
  if (failed) return { phase: 'Degraded', message: `${failed.reason}: ${failed.message}` };
  if (s.specPaused) return { phase: 'Paused', message: 'manually paused' };
  if (s.pauseConditions.length > 0) return { phase: 'Paused', message: s.pauseConditions[0]!.reason };
  if (s.restartAt && s.restartAt !== s.restartedAt) return { phase: 'Progressing', message: 'rollout is restarting' };
  if (s.updatedReplicas < s.specReplicas) return { phase: 'Progressing', message: 'more replicas need to be updated' };
  if (s.availableReplicas < s.updatedReplicas) return { phase: 'Progressing', message: 'updated replicas are still becoming available' };
  if (!s.trafficRouting && s.replicas > s.updatedReplicas) return { phase: 'Progressing', message: 'old replicas are pending termination' };
  if (!s.fullyPromoted) return { phase: 'Progressing', message: 'waiting for all steps to complete' };
  return { phase: 'Healthy', message: '' };
}
