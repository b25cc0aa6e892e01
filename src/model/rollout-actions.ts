/**
 * Which Rollout actions are on offer, and the patches Glidepath sends for them. Both follow
 * Argo CD's Rollout resource actions (what its UI offers and what each one writes), so a button
 * in Slack appears exactly when the same button is live in Argo CD, and does the same thing.
 */
import { luaLength, luaToNumber } from './rollout-argo-health.js';
import { num, record } from './json.js';
import { partsOf, type Rollout } from './rollout.js';

export interface RolloutActions {
  /** Clear the pause (Glidepath's Approve): offered while paused by a pause condition or spec.paused. */
  resume: boolean;
  abort: boolean;
  retry: boolean;
  promoteFull: boolean;
  pause: boolean;
  skipCurrentStep: boolean;
  restart: boolean;
}

const NONE: RolloutActions = {
  resume: false,
  abort: false,
  retry: false,
  promoteFull: false,
  pause: false,
  skipCurrentStep: false,
  restart: false,
};

function truthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * Before v0.10 `status.observedGeneration` was a hash; a number larger than the generation is an
 * all-digit hash. Those controllers know neither `status.promoteFull` nor blue-green full promotion.
 */
function isLegacyController(rollout: Rollout, observedGeneration: unknown): boolean {
  const observed = luaToNumber(observedGeneration);
  if (observed === undefined) return true;
  const generation = luaToNumber(record(rollout.metadata)?.generation) ?? 0;
  return observed > generation;
}

export function rolloutActions(rollout: Rollout): RolloutActions {
  const { spec, strategy, status, steps } = partsOf(rollout);
  // Argo CD's discovery fails on a Rollout without status, so it offers nothing.
  if (!status) return { ...NONE };

  const paused = !absent(status.pauseConditions) ? luaLength(status.pauseConditions) > 0 : truthy(spec.paused);
  // Deliberately status.stableRS only (no pre-v0.8 fallback), and two missing hashes are equal.
  const fullyPromoted = (status.currentPodHash ?? undefined) === (status.stableRS ?? undefined);
  const aborted = truthy(status.abort);
  const promoteFull = !fullyPromoted && (!isLegacyController(rollout, status.observedGeneration) || absent(strategy?.blueGreen));
  const stepIndex = num(status.currentStepIndex);

  return {
    resume: paused,
    abort: !fullyPromoted && !aborted,
    retry: !fullyPromoted && aborted,
    promoteFull,
    pause: !fullyPromoted && !aborted && !truthy(spec.paused),
    skipCurrentStep: absent(strategy?.canary) || !steps ? false : stepIndex !== steps.length,
    restart: true,
  };
}

export type RolloutActionName = 'resume' | 'abort' | 'retry' | 'promoteFull';

/**
 * Merge patches (`application/merge-patch+json`) for one action. `status` goes to the status
 * subresource (`.../rollouts/<name>/status`), `spec` to the Rollout itself: with the status
 * subresource on, each endpoint ignores the other half. Send `status` first, then `spec`.
 * An action with nothing to change returns no patch at all.
 */
export interface RolloutActionPatches {
  status?: { status: Record<string, unknown> };
  spec?: { spec: Record<string, unknown> };
}

export function rolloutActionPatch(action: RolloutActionName, rollout: Rollout): RolloutActionPatches {
  const { spec, status, steps } = partsOf(rollout);
  switch (action) {
    case 'resume': {
      const patches: RolloutActionPatches = {};
      if (luaLength(status?.pauseConditions) > 0) {
        patches.status = { status: { pauseConditions: null } };
      }
      if (spec.paused === true) patches.spec = { spec: { paused: false } };
      return patches;
    }
    case 'abort':
      return { status: { status: { abort: true } } };
    case 'retry':
      // null removes the field (RFC 7386), which the controller reads as false.
      return { status: { status: { abort: null } } };
    case 'promoteFull': {
      if (!status) return {};
      if (!isLegacyController(rollout, status.observedGeneration)) return { status: { status: { promoteFull: true } } };
      // Old controllers: leave the abort and jump past the last step.
      const patch: Record<string, unknown> = { abort: null };
      if (steps) patch.currentStepIndex = steps.length;
      return { status: { status: patch } };
    }
  }
}
