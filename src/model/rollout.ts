/**
 * An Argo Rollout as Glidepath reads it, from a notification body (which carries only part of the
 * spec) or from a cluster (a GET, a watch). One schema for both: the facts ingest wraps it in its
 * envelope (src/facts/schemas.ts), kube reads parse with it (src/kube/reads.ts).
 *
 * Field shapes follow the CRD and what the controller and its notification templates send:
 * `metadata.generation` is a number from the API and may be a string (`"12"`) in a template's
 * output; `status.observedGeneration` is a string since v0.10 and a pod-template-like hash before.
 * Only fields Glidepath decides on are typed; the judgements (rollout-state.ts and its parts)
 * read every other field with type checks, since controllers since v0.x shape them differently.
 */
import { z } from 'zod';
import { analysisRunStatusSchema } from './analysis-run.js';
import { list, record, type JsonRecord } from './json.js';
import { ARGOPROJ, clusterObjectMetaSchema, cutText, ident, integer, ofType } from './meta.js';
import { generation } from './kube-names.js';

/** The image is what a release is known by (its id when no annotation names one): refused, never cut. */
const container = z.looseObject({ name: ident(253).optional(), image: ident(1024).optional() });

/** One canary step: exactly one key is set upstream (`setWeight`, `pause`, `analysis`, ...). */
export const canaryStepSchema = z.looseObject({}).nullable();
export type CanaryStep = z.infer<typeof canaryStepSchema>;

const rolloutSpec = z
  .looseObject({
    replicas: integer.nullish(),
    paused: z.boolean().nullish(),
    restartAt: ident(64).nullish(),
    template: z
      .looseObject({ spec: z.looseObject({ containers: z.array(container).max(64).nullish() }).nullish() })
      .nullish(),
    strategy: z
      .looseObject({
        canary: z.looseObject({ steps: z.array(canaryStepSchema).max(500).nullish() }).nullish(),
        blueGreen: z.looseObject({}).nullish(),
      })
      .nullish(),
  })
  .nullish();

const rolloutStatus = z
  .looseObject({
    phase: ident(64).nullish(),
    /** Cut, not refused: an abort carries the reason here, and a long one must not hide the abort. */
    message: cutText(16_384).nullish(),
    /** A string since v0.10 (`"12"`); a pod-template-like hash before that. */
    observedGeneration: z.union([ident(128), z.number()]).nullish(),
    currentPodHash: ident(64).nullish(),
    stableRS: ident(64).nullish(),
    currentStepIndex: integer.nullish(),
    pauseConditions: z.array(z.looseObject({ reason: cutText(128).nullish(), startTime: ident(64).nullish() })).max(32).nullish(),
    controllerPause: z.boolean().nullish(),
    abort: z.boolean().nullish(),
    abortedAt: ident(64).nullish(),
    restartedAt: ident(64).nullish(),
    replicas: integer.nullish(),
    updatedReplicas: integer.nullish(),
    readyReplicas: integer.nullish(),
    availableReplicas: integer.nullish(),
    HPAReplicas: integer.nullish(),
    conditions: z
      .array(z.looseObject({ type: ident(128), status: ident(32).optional(), reason: cutText(256).optional(), message: cutText(16_384).optional() }))
      .max(64)
      .nullish(),
    canary: z
      .looseObject({
        weights: z.looseObject({ canary: z.looseObject({ weight: integer.nullish() }).nullish() }).nullish(),
        currentStepAnalysisRunStatus: analysisRunStatusSchema.nullish(),
      })
      .nullish(),
    blueGreen: z.looseObject({}).nullish(),
  })
  .nullish();

export const rolloutSchema = ofType(
  { kind: 'Rollout', apiVersions: ARGOPROJ },
  z.looseObject({
    metadata: clusterObjectMetaSchema.extend({ generation }),
    spec: rolloutSpec,
    status: rolloutStatus,
  }),
);
export type Rollout = z.infer<typeof rolloutSchema>;

/** The phase the Rollouts client shows (`RolloutPhase`), and Unknown for anything else. */
export type RolloutPhase = 'Healthy' | 'Progressing' | 'Paused' | 'Degraded' | 'Unknown';

/** `metadata.generation` as a number; a numeric string is accepted, anything else is absent. */
export function generationOf(rollout: Rollout): number | undefined {
  const raw = record(rollout.metadata)?.generation;
  if (typeof raw === 'number') return Number.isInteger(raw) ? raw : undefined;
  if (typeof raw === 'string' && /^\d+$/.test(raw)) return Number(raw);
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

export function partsOf(rollout: Rollout): RolloutParts {
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
