/**
 * The shape of an Argo Rollout as Glidepath receives it: a webhook body (which carries only part
 * of the spec) or a Kubernetes watch object (any controller version since v0.x). Every field is
 * optional and unknown fields are allowed, so the readers below never trust a field's type: text
 * from a cluster is untrusted and a judgement must not throw on an odd object.
 */

export interface RolloutConditionLike {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  [key: string]: unknown;
}

export interface PauseConditionLike {
  reason?: string;
  startTime?: string;
  [key: string]: unknown;
}

export interface AnalysisRunStatusLike {
  name?: string;
  status?: string;
  message?: string;
  [key: string]: unknown;
}

/** One canary step: exactly one key is set upstream (`setWeight`, `pause`, `analysis`, ...). */
export interface CanaryStepLike {
  setWeight?: number;
  pause?: { duration?: number | string } | null;
  analysis?: unknown;
  experiment?: unknown;
  setCanaryScale?: { weight?: number; replicas?: number; matchTrafficWeight?: boolean } | null;
  setHeaderRoute?: { name?: string } | null;
  setMirrorRoute?: { name?: string } | null;
  plugin?: { name?: string } | null;
  [key: string]: unknown;
}

export interface RolloutLike {
  metadata?: {
    generation?: number | string;
    annotations?: Record<string, string> | null;
    [key: string]: unknown;
  } | null;
  spec?: {
    replicas?: number | null;
    paused?: boolean | null;
    restartAt?: string | null;
    workloadRef?: unknown;
    strategy?: {
      canary?: {
        steps?: readonly CanaryStepLike[] | null;
        trafficRouting?: unknown;
        [key: string]: unknown;
      } | null;
      blueGreen?: {
        postPromotionAnalysis?: unknown;
        [key: string]: unknown;
      } | null;
      [key: string]: unknown;
    } | null;
    [key: string]: unknown;
  } | null;
  status?: {
    phase?: string;
    message?: string;
    /** A string since v0.10 (`"12"`); a pod-template-like hash before that. */
    observedGeneration?: string | number;
    workloadObservedGeneration?: string | number;
    currentPodHash?: string;
    stableRS?: string;
    currentStepIndex?: number | null;
    pauseConditions?: readonly PauseConditionLike[] | null;
    controllerPause?: boolean | null;
    abort?: boolean | null;
    abortedAt?: string | null;
    promoteFull?: boolean | null;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    restartedAt?: string | null;
    conditions?: readonly RolloutConditionLike[] | null;
    canary?: {
      /** Before v0.8 the stable hash lived here. */
      stableRS?: string;
      weights?: { canary?: { weight?: number; [key: string]: unknown } | null; [key: string]: unknown } | null;
      currentStepAnalysisRunStatus?: AnalysisRunStatusLike | null;
      [key: string]: unknown;
    } | null;
    blueGreen?: {
      activeSelector?: string;
      previewSelector?: string;
      postPromotionAnalysisRunStatus?: AnalysisRunStatusLike | null;
      [key: string]: unknown;
    } | null;
    [key: string]: unknown;
  } | null;
  [key: string]: unknown;
}

export type JsonRecord = Record<string, unknown>;

export function record(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `metadata.generation` as a number; a numeric string is accepted, anything else is absent. */
export function generationOf(rollout: RolloutLike): number | undefined {
  const raw = record(rollout.metadata)?.generation;
  if (typeof raw === 'number') return Number.isInteger(raw) ? raw : undefined;
  if (typeof raw === 'string' && /^\d+$/.test(raw)) return Number(raw);
  return undefined;
}

/** Parses like Go's strconv.Atoi: optional sign and decimal digits, nothing else. */
export function atoi(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return Number(value);
  return undefined;
}

/** The parts of a Rollout every judgement reads, each checked for its type. */
export interface RolloutParts {
  metadata: JsonRecord;
  spec: JsonRecord;
  strategy: JsonRecord | undefined;
  canary: JsonRecord | undefined;
  blueGreen: JsonRecord | undefined;
  steps: unknown[] | undefined;
  status: JsonRecord | undefined;
  statusCanary: JsonRecord | undefined;
  statusBlueGreen: JsonRecord | undefined;
  conditions: unknown[];
  pauseConditions: unknown[];
}

export function partsOf(rollout: RolloutLike): RolloutParts {
  const spec = record(rollout.spec) ?? {};
  const strategy = record(spec.strategy);
  const canary = record(strategy?.canary);
  const status = record(rollout.status);
  return {
    metadata: record(rollout.metadata) ?? {},
    spec,
    strategy,
    canary,
    blueGreen: record(strategy?.blueGreen),
    steps: Array.isArray(canary?.steps) ? canary.steps : undefined,
    status,
    statusCanary: record(status?.canary),
    statusBlueGreen: record(status?.blueGreen),
    conditions: list(status?.conditions),
    pauseConditions: list(status?.pauseConditions),
  };
}
