/**
 * What a Kargo Stage object says about its promotion, health and verification (pure, bounded): the
 * one reading both the watch's normaliser (src/facts/normalise-kargo.ts) and the cluster reads of
 * `/glidepath status` (src/kube/kargo.ts) make, so the judgement (kargo-health.ts) gets the same
 * input from either. A Stage is about one Freight: its current Promotion's, else its last
 * Promotion's, else `freightHistory[0]`; a target-aware Stage (Kargo main, `spec.targets`) reports
 * through `currentPromotionRequest` / `lastPromotionRequest`, which name their Freight only.
 */
import type { FreightReference } from './kargo-freight.js';
import type { PromotionStatus } from './kargo-promotion.js';
import type { Stage } from './kargo-stage.js';
import { cutCodePoints } from './unicode.js';

const MAX_MESSAGE = 2_000;
const RUNNING = 'Running';

export type KargoPromotionVia = 'Promotion' | 'PromotionRequest';

/** One Promotion (or, for a target-aware Stage, PromotionRequest) of a Stage, as far as it is known. */
export interface KargoPromotionState {
  name: string;
  via: KargoPromotionVia;
  /** '' before the controller set one; Pending, Running, Succeeded, Failed, Errored, Aborted. */
  phase: string;
  message?: string;
  /** The step that failed or errored (its alias) and its message. */
  failedStep?: { alias: string; message?: string };
  /** Running: the step at work (1-based) of how many. */
  step?: { number: number; count?: number; alias?: string };
  /** A PromotionRequest: the Target whose child Promotion failed or errored (told by that child Promotion). */
  failedTarget?: { name: string; promotion: string; phase: string };
  /** `kargo.akuity.io/create-actor`: who asked for it (only a Promotion object carries it). */
  actor?: string;
  startedAt?: string;
  finishedAt?: string;
  /** resourceVersion of the Promotion object this came from (Promotion facts only). */
  resourceVersion?: string;
}

export interface KargoVerificationState {
  id?: string;
  phase: string;
  message?: string;
  analysisRun?: string;
  startTime?: string;
  finishTime?: string;
}

export interface StageReading {
  /** `spec.targets` is set (Kargo main): promoted through PromotionRequests. */
  targetAware: boolean;
  /** `spec.verification` is set: the Freight is done here only once verified. */
  verificationConfigured: boolean;
  /** Kargo's live `status.health.status`: Healthy, Progressing, Unknown, Unhealthy, NotApplicable. */
  health?: string;
  /** The Healthy condition's reason and message, when not Healthy. */
  healthReason?: string;
  /** The current Promotion (or PromotionRequest), else the last one. */
  promotion?: KargoPromotionState;
  /** The Freight the reading is about (name), with what the Stage's status says it carries, if anything. */
  freight?: { name: string; ref?: FreightReference };
  /** Name of the Freight the Stage holds now (`freightHistory[0]`). */
  heldFreight?: string;
  /** The newest verification of `freight`, when `freight` is the Freight the Stage holds. */
  verification?: KargoVerificationState;
}

export const boundedText = (text: string | undefined, max = MAX_MESSAGE): string | undefined => (text ? cutCodePoints(text, max) : undefined);

/** The step that failed, from the status's step metadata (its alias and message), when one did. */
function failedStep(status: PromotionStatus | undefined): KargoPromotionState['failedStep'] {
  const steps = status?.stepExecutionMetadata ?? [];
  const failed = [...steps].reverse().find((s) => s.status === 'Failed' || s.status === 'Errored');
  if (!failed) return undefined;
  const index = steps.indexOf(failed);
  return { alias: cutCodePoints(failed.alias ?? `step-${index + 1}`, 253), ...(failed.message ? { message: boundedText(failed.message) } : {}) };
}

/** A Promotion's status as the state the thread and status tell. */
export function promotionState(name: string, status: PromotionStatus | undefined, extra: Partial<KargoPromotionState> = {}): KargoPromotionState {
  const step = failedStep(status);
  const phase = extra.phase ?? status?.phase ?? '';
  const current = status?.currentStep;
  const running = phase === RUNNING && current !== undefined ? status?.stepExecutionMetadata?.[current] : undefined;
  return {
    name,
    via: 'Promotion',
    phase,
    ...(status?.message ? { message: boundedText(status.message) } : {}),
    ...(step ? { failedStep: step } : {}),
    ...(phase === RUNNING && current !== undefined ? { step: { number: current + 1, ...(running?.alias ? { alias: cutCodePoints(running.alias, 253) } : {}) } } : {}),
    ...(status?.startedAt ? { startedAt: status.startedAt } : {}),
    ...(status?.finishedAt ? { finishedAt: status.finishedAt } : {}),
    ...extra,
  };
}

function firstItem(collection: { items?: Record<string, FreightReference> } | undefined): FreightReference | undefined {
  return Object.values(collection?.items ?? {})[0];
}

/** The Freight a Stage holds now: the first item of its current collection (`freightHistory[0]`). */
export function heldFreightName(stage: Pick<Stage, 'status'>): string | undefined {
  return firstItem(stage.status?.freightHistory?.[0])?.name ?? undefined;
}

/** Kargo's `IsTargetAware`: the presence of `spec.targets` decides, not what its selectors match. */
export const isTargetAware = (stage: Pick<Stage, 'spec'>): boolean => stage.spec?.targets !== undefined;

/** Which Promotion (or PromotionRequest) the Stage is at, and the Freight it is about. */
function aboutOf(stage: Stage): Pick<StageReading, 'promotion' | 'freight'> {
  const status = stage.status;
  if (isTargetAware(stage)) {
    const current = status?.currentPromotionRequest?.name ? status.currentPromotionRequest : undefined;
    const request = current ?? (status?.lastPromotionRequest?.name ? status.lastPromotionRequest : undefined);
    if (request?.name) {
      const promotion: KargoPromotionState = {
        name: request.name,
        via: 'PromotionRequest',
        phase: request.phase ?? (current ? RUNNING : ''),
        ...(request.finishedAt ? { finishedAt: request.finishedAt } : {}),
      };
      return { promotion, ...(request.freight?.name ? { freight: { name: request.freight.name } } : {}) };
    }
  }
  const current = status?.currentPromotion;
  if (current?.name) {
    return { promotion: promotionState(current.name, undefined, { phase: RUNNING }), ...(current.freight?.name ? { freight: { name: current.freight.name, ref: current.freight } } : {}) };
  }
  const last = status?.lastPromotion;
  if (last?.name) {
    const promotion = promotionState(last.name, last.status, last.finishedAt && !last.status?.finishedAt ? { finishedAt: last.finishedAt } : {});
    return { promotion, ...(last.freight?.name ? { freight: { name: last.freight.name, ref: last.freight } } : {}) };
  }
  const held = firstItem(status?.freightHistory?.[0]);
  return held?.name ? { freight: { name: held.name, ref: held } } : {};
}

export function readStage(stage: Stage): StageReading {
  const status = stage.status;
  const about = aboutOf(stage);
  const held = status?.freightHistory?.[0];
  const heldName = heldFreightName(stage);
  const newest = held?.verificationHistory?.[0];
  const verification: KargoVerificationState | undefined =
    newest && about.freight && heldName === about.freight.name
      ? {
          phase: newest.phase ?? 'Pending',
          ...(newest.id ? { id: newest.id } : {}),
          ...(newest.message ? { message: boundedText(newest.message) } : {}),
          ...(newest.analysisRun?.name ? { analysisRun: newest.analysisRun.name } : {}),
          ...(newest.startTime ? { startTime: newest.startTime } : {}),
          ...(newest.finishTime ? { finishTime: newest.finishTime } : {}),
        }
      : undefined;
  const healthy = status?.conditions?.find((c) => c.type === 'Healthy');
  return {
    targetAware: isTargetAware(stage),
    verificationConfigured: (stage.spec?.verification?.analysisTemplates?.length ?? 0) > 0,
    ...(status?.health?.status ? { health: status.health.status } : {}),
    ...(healthy && healthy.status !== 'True' && (healthy.reason || healthy.message) ? { healthReason: boundedText(healthy.message ?? healthy.reason ?? undefined, 500) } : {}),
    ...about,
    ...(heldName ? { heldFreight: heldName } : {}),
    ...(verification ? { verification } : {}),
  };
}
