/**
 * The one judgement of a Kargo Stage (pure): where it is with its Promotion (or PromotionRequest),
 * and whether it has been healthy since. The thread (src/releases/record/kargo-state.ts keeps the latch in
 * the release record) and `/glidepath status` (a Stage read from the cluster, with the latch of
 * the release that follows it) both ask `judgeStage`, so they cannot disagree.
 *
 * Kargo recomputes health live, so an autoscaling app turns a done Stage Progressing again
 * (kargo#2847, #6886). Glidepath latches per Promotion: once the Stage was healthy after this
 * Promotion (Healthy seen, or a verification of its Freight started since, which Kargo starts only
 * on a Healthy Stage), a later Progressing or Unknown is shown as such and the Stage stays healthy;
 * Unhealthy still counts, and a failed Promotion or verification is a failure.
 */
import type { RolloutPhase } from './rollout.js';
import type { Stage } from './kargo-stage.js';
import { readStage, type KargoPromotionState, type KargoVerificationState, type StageReading } from './kargo-stage-reading.js';

export type KargoJudgement = 'promoting' | 'promotion-failed' | 'aborted' | 'waiting-health' | 'verifying' | 'verification-failed' | 'unhealthy' | 'healthy';

export const ACTIVE_PROMOTION_PHASES: ReadonlySet<string> = new Set(['', 'Pending', 'Running']);
const FAILED_VERIFICATION = new Set(['Failed', 'Error']);

/** What the judgement looks at: the Stage's promotion, health and verification, and the latch (ms) if one was kept. */
export interface KargoJudgementInput {
  promotion?: KargoPromotionState;
  health?: string;
  healthReason?: string;
  verification?: KargoVerificationState;
  verificationConfigured: boolean;
  /** The latch: first seen healthy since `promotion` (ms). */
  healthyAt?: number;
}

export interface KargoVerdict {
  phase: RolloutPhase;
  message: string;
  aborted: boolean;
  judged: KargoJudgement;
}

/** Evidence the Stage was healthy after its Promotion: Healthy now, or a verification of its Freight started since. */
export function healthyEvidence(k: Pick<KargoJudgementInput, 'promotion' | 'health' | 'verification'>): boolean {
  const p = k.promotion;
  if (p && p.phase !== 'Succeeded') return false;
  if (k.health === 'Healthy') return true;
  const v = k.verification;
  if (!v) return false;
  const started = Date.parse(v.startTime ?? '');
  const finished = Date.parse(p?.finishedAt ?? '');
  return Number.isNaN(started) || Number.isNaN(finished) || started >= finished;
}

export function promotionText(p: KargoPromotionState): string {
  const step = p.step ? ` (step ${p.step.number}${p.step.count ? `/${p.step.count}` : ''}${p.step.alias ? ` ${p.step.alias}` : ''})` : '';
  return `${p.via} ${p.phase || 'Pending'}${step}`;
}

/** Where and why a Promotion failed: for a PromotionRequest, the Target whose child Promotion failed. */
function failureText(p: KargoPromotionState): string {
  const target = p.failedTarget ? ` · Target ${p.failedTarget.name} ${p.failedTarget.phase}` : '';
  const at = p.failedStep ? ` at step ${p.failedStep.alias}` : '';
  const why = p.failedStep?.message ?? p.message;
  return `${promotionText(p)}${target}${at}${why ? `: ${why}` : ''}`;
}

/** The status a Kargo Stage shows, and why: the same words in the thread's row and in `/glidepath status`. */
export function judgeStage(k: KargoJudgementInput): KargoVerdict {
  const p = k.promotion;
  if (p && ACTIVE_PROMOTION_PHASES.has(p.phase)) return { phase: 'Progressing', message: promotionText(p), aborted: false, judged: 'promoting' };
  if (p && (p.phase === 'Failed' || p.phase === 'Errored')) return { phase: 'Degraded', message: failureText(p), aborted: false, judged: 'promotion-failed' };
  if (p && p.phase === 'Aborted') return { phase: 'Degraded', message: `${promotionText(p)}${p.message ? `: ${p.message}` : ''}`, aborted: true, judged: 'aborted' };
  const v = k.verification;
  if (v && FAILED_VERIFICATION.has(v.phase)) {
    return { phase: 'Degraded', message: `verification ${v.phase}${v.message ? `: ${v.message}` : ''}`, aborted: false, judged: 'verification-failed' };
  }
  if (k.health === 'Unhealthy') return { phase: 'Degraded', message: `Stage Unhealthy${k.healthReason ? `: ${k.healthReason}` : ''}`, aborted: false, judged: 'unhealthy' };
  if (k.healthyAt === undefined) {
    return { phase: 'Progressing', message: `Stage ${k.health ?? 'health not reported'}, not yet healthy since the ${p?.via ?? 'Promotion'}`, aborted: false, judged: 'waiting-health' };
  }
  const now = k.health && k.health !== 'Healthy' ? ` · now ${k.health}` : '';
  if (k.verificationConfigured && v?.phase !== 'Successful') {
    return { phase: 'Progressing', message: `healthy since promotion${now} · verification ${v?.phase ?? 'Pending'}`, aborted: false, judged: 'verifying' };
  }
  return { phase: 'Healthy', message: now ? `healthy since promotion${now}` : '', aborted: false, judged: 'healthy' };
}

/** What `/glidepath status` tells of a Stage read from the cluster: the reading and the verdict. */
export interface StageHealthSummary extends KargoVerdict {
  stage: string;
  reading: StageReading;
  /** Healthy at least once since the Stage's current (or last) Promotion. */
  healthySincePromotion: boolean;
  /** Whose latch: the thread's (a release follows this Stage under this Promotion), or the cluster's evidence alone. */
  latch: 'thread' | 'cluster';
}

export interface StageEvidence {
  /** The latches release records keep for this Stage: under which Promotion, and since when (ms), if it latched. */
  followed?: readonly { promotion?: string; healthyAt?: number }[];
  /** `Freight.status.verifiedIn[stage].verifiedAt` of the Freight the reading is about (Kargo marks it only on a Healthy Stage). */
  freightVerifiedAt?: string | null;
  now?: number;
}

/**
 * Judges a Stage read from the cluster as the thread judges it. Where a release follows the Stage
 * under the same Promotion, its latch is the one used (and the evidence the thread would latch on
 * at its next observation); otherwise the cluster's own evidence, including the Freight verified in
 * this Stage since the Promotion finished.
 */
export function summarizeStage(stage: Stage, evidence: StageEvidence = {}): StageHealthSummary {
  const reading = readStage(stage);
  const p = reading.promotion;
  const followed = p ? evidence.followed?.find((f) => f.promotion === p.name) : undefined;
  const now = evidence.now ?? Date.now();
  let healthyAt = followed?.healthyAt ?? (healthyEvidence(reading) ? now : undefined);
  if (healthyAt === undefined && !followed && evidence.freightVerifiedAt && (!p || p.phase === 'Succeeded')) {
    const verified = Date.parse(evidence.freightVerifiedAt);
    const finished = Date.parse(p?.finishedAt ?? '');
    if (!Number.isNaN(verified) && (Number.isNaN(finished) || verified >= finished)) healthyAt = verified;
  }
  const verdict = judgeStage({ ...reading, ...(healthyAt !== undefined ? { healthyAt } : {}) });
  const healthySincePromotion = healthyAt !== undefined && verdict.judged !== 'promoting' && verdict.judged !== 'promotion-failed' && verdict.judged !== 'aborted';
  return { stage: stage.metadata.name, reading, ...verdict, healthySincePromotion, latch: followed ? 'thread' : 'cluster' };
}
