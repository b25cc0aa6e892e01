/**
 * The `when` and `oncePer` of every trigger in deploy/notifications/, as code. The engine refuses a
 * config that names a trigger missing here, so the two cannot drift apart silently.
 */
import type { KubeObject } from '../object.js';

export interface TriggerDefinition {
  when(obj: KubeObject, nowMs: number): boolean;
  /** Without oncePer a trigger is edge-triggered: it fires again after its condition was false. */
  oncePer?(obj: KubeObject, nowMs: number): string;
}

/** `rollout.status != nil && rollout.status.observedGeneration == string(rollout.metadata.generation)` */
function observed(r: KubeObject): boolean {
  return r.status != null && r.status.observedGeneration === String(r.metadata.generation);
}

export const ROLLOUT_TRIGGERS: Record<string, TriggerDefinition> = {
  'on-glidepath-rollout-updated': {
    when: (r) => observed(r) && r.status.currentPodHash !== r.status.stableRS,
    oncePer: (r) => String(r.status.currentPodHash),
  },
  'on-glidepath-rollout-step': {
    when: (r) => observed(r) && r.status.currentPodHash !== r.status.stableRS && r.status.currentStepIndex != null,
    oncePer: (r) => `${r.status.currentPodHash}/${r.status.currentStepIndex}`,
  },
  'on-glidepath-rollout-paused': {
    when: (r) => observed(r) && r.status.phase === 'Paused',
    oncePer: (r) => `${r.status.currentPodHash}/${r.status.currentStepIndex}/paused`,
  },
  'on-glidepath-rollout-healthy': {
    when: (r) => observed(r) && r.status.phase === 'Healthy' && r.status.currentPodHash === r.status.stableRS,
    oncePer: (r) => `${r.status.currentPodHash}/healthy`,
  },
  'on-glidepath-rollout-degraded': { when: (r) => observed(r) && r.status.phase === 'Degraded' },
  'on-glidepath-rollout-aborted': {
    when: (r) => observed(r) && r.status.abort === true,
    oncePer: (r) => `${r.status.currentPodHash}/aborted`,
  },
  'on-glidepath-heartbeat': {
    when: (r) => observed(r),
    oncePer: (_r, now) => String(Math.floor(now / 1000 / 600)),
  },
};

export const APPLICATION_TRIGGERS: Record<string, TriggerDefinition> = {
  'on-glidepath-sync-failed': {
    when: (a) => a.status?.operationState != null && ['Failed', 'Error'].includes(a.status.operationState.phase),
    oncePer: (a) => String(a.status.operationState.finishedAt),
  },
  'on-glidepath-sync-retrying': {
    when: (a) => a.status?.operationState?.phase === 'Running' && (a.status.operationState.retryCount ?? 0) > 0,
    oncePer: (a) => `${a.status.operationState.startedAt}/${a.status.operationState.retryCount}`,
  },
  'on-glidepath-sync-running-long': {
    when: (a, now) => a.status?.operationState?.phase === 'Running' && now - Date.parse(a.status.operationState.startedAt) >= 10 * 60_000,
    oncePer: (a) => String(a.status.operationState.startedAt),
  },
  'on-glidepath-app-deployed': {
    when: (a) => a.status?.operationState?.phase === 'Succeeded' && a.status?.health?.status === 'Healthy',
    oncePer: (a) => String(a.status.operationState.syncResult?.revision),
  },
  'on-glidepath-app-degraded': { when: (a) => a.status?.health?.status === 'Degraded' },
};

/** Which Glidepath trigger a built-in event would have hit, for the stale event-path fault. */
export const EVENT_PATH_TRIGGERS: Record<string, string> = {
  RolloutUpdated: 'on-glidepath-rollout-updated',
  RolloutStepCompleted: 'on-glidepath-rollout-step',
  RolloutPaused: 'on-glidepath-rollout-paused',
  RolloutAborted: 'on-glidepath-rollout-aborted',
  RolloutCompleted: 'on-glidepath-rollout-healthy',
};
