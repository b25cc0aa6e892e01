/**
 * The health Argo CD shows for a Rollout (its built-in health check for argoproj.io/Rollout).
 * Glidepath must say the same thing the Argo CD UI says, so this follows that check's rules,
 * including its quirks on old Rollouts: a Lua `nil` is `undefined` here, a Lua runtime error
 * becomes Unknown (what Argo CD shows when a health script fails).
 */
import { num, record, str, type JsonRecord } from './json.js';
import { partsOf, type Rollout } from './rollout.js';

export type ArgoHealthStatus = 'Healthy' | 'Progressing' | 'Suspended' | 'Degraded' | 'Unknown';

export interface ArgoHealth {
  status: ArgoHealthStatus;
  message: string;
}

// Argo CD also accepts Missing, which cannot apply to an object we hold; we call it Unknown.
const VALID: ReadonlySet<string> = new Set(['Healthy', 'Progressing', 'Suspended', 'Degraded', 'Unknown']);

class ScriptError extends Error {}

/** Lua's `tonumber` on a string or number (decimal, float or hex); undefined when Lua gives nil. */
export function luaToNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^-?0[xX][0-9a-fA-F]+$/.test(text)) return Number.parseInt(text, 16);
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return undefined;
}

/**
 * `table.getn` of a JSON value as Argo CD hands it to Lua: JSON nulls are dropped from arrays
 * when the object is converted, and an object has no array part.
 */
export function luaLength(value: unknown): number {
  return Array.isArray(value) ? value.filter((item) => item !== null && item !== undefined).length : 0;
}

function truthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

/** Lua treats JSON null as nil; so do we. */
function nil(value: unknown): boolean {
  return value === undefined || value === null;
}

function generationObserved(rollout: Rollout, status: JsonRecord | undefined): boolean {
  if (!status) return false;
  const observed = luaToNumber(status.observedGeneration);
  if (observed === undefined) return true; // a pre-v0.10 hash
  const generation = luaToNumber(record(rollout.metadata)?.generation);
  if (generation === undefined) throw new ScriptError('attempt to compare number with nil (metadata.generation)');
  return observed > generation || observed === generation;
}

function workloadGenerationObserved(spec: JsonRecord, metadata: JsonRecord, status: JsonRecord): boolean {
  const annotations = record(metadata.annotations);
  if (nil(spec.workloadRef) || !annotations) return true;
  return luaToNumber(annotations['rollout.argoproj.io/workload-generation']) === luaToNumber(status.workloadObservedGeneration);
}

function evaluate(rollout: Rollout): ArgoHealth {
  const { metadata, spec, strategy, status, statusCanary, statusBlueGreen } = partsOf(rollout);
  const pauseConditions = status?.pauseConditions;
  if (!status || !generationObserved(rollout, status) || !workloadGenerationObserved(spec, metadata, status)) {
    return { status: 'Progressing', message: 'Waiting for rollout spec update to be observed' };
  }

  if (!nil(status.phase)) {
    const phase = status.phase === 'Paused' ? 'Suspended' : status.phase;
    return { status: phase as ArgoHealthStatus, message: str(status.message) ?? '' };
  }

  const conditions = status.conditions;
  if (!Array.isArray(conditions) && !record(conditions)) throw new ScriptError('bad argument #1 to ipairs (table expected)');
  for (const condition of Array.isArray(conditions) ? conditions : []) {
    const c = record(condition) ?? {};
    const degraded =
      c.type === 'InvalidSpec' ||
      (c.type === 'Progressing' && (c.reason === 'RolloutAborted' || c.reason === 'ProgressDeadlineExceeded'));
    if (degraded) return { status: 'Degraded', message: str(c.message) ?? '' };
  }

  if (luaLength(pauseConditions) > 0 || truthy(spec.paused)) return { status: 'Suspended', message: 'Rollout is paused' };

  const currentPodHash = status.currentPodHash;
  if (nil(currentPodHash)) {
    return { status: 'Progressing', message: 'Waiting for rollout to finish: status has not been reconciled.' };
  }

  const desired = num(spec.replicas) ?? 1;
  const replicas = num(status.replicas) ?? 0;
  const updated = num(status.updatedReplicas) ?? 0;
  const available = num(status.availableReplicas) ?? 0;
  if (updated < desired) {
    return { status: 'Progressing', message: 'Waiting for roll out to finish: More replicas need to be updated' };
  }
  if (available < updated) {
    return { status: 'Progressing', message: 'Waiting for roll out to finish: updated replicas are still becoming available' };
  }

  // v0.8 moved the stable hash from status.canary.stableRS to status.stableRS.
  const stableRS: unknown = !nil(status.stableRS) ? status.stableRS : statusCanary ? statusCanary.stableRS : '';
  if (!strategy) throw new ScriptError('attempt to index a nil value (spec.strategy)');
  if (!nil(strategy.blueGreen)) {
    if (!statusBlueGreen || statusBlueGreen.activeSelector !== currentPodHash) {
      return { status: 'Progressing', message: 'active service cutover pending' };
    }
    if (stableRS !== '' && stableRS !== currentPodHash) {
      return { status: 'Progressing', message: 'waiting for analysis to complete' };
    }
  } else if (!nil(strategy.canary)) {
    if (replicas > updated) {
      return { status: 'Progressing', message: 'Waiting for roll out to finish: old replicas are pending termination' };
    }
    if (stableRS === '' || stableRS !== currentPodHash) {
      return { status: 'Progressing', message: 'Waiting for rollout to finish steps' };
    }
  }
  return { status: 'Healthy', message: '' };
}

export function argoCdRolloutHealth(rollout: Rollout): ArgoHealth {
  let health: ArgoHealth;
  try {
    health = evaluate(rollout);
  } catch (error) {
    if (error instanceof ScriptError) return { status: 'Unknown', message: `health check failed: ${error.message}` };
    throw error;
  }
  if (!VALID.has(health.status)) return { status: 'Unknown', message: 'Lua returned an invalid health status' };
  return health;
}
