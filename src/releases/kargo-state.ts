/**
 * What a release record keeps of a Kargo Stage target, and the judgement of it (pure). Kargo
 * recomputes a Stage's health live from its Argo CD Applications, so an app that autoscales turns
 * a done Stage Progressing again (kargo#2847, #6886). Glidepath latches per Promotion: once the
 * Stage was healthy after this Promotion (Healthy seen, or a verification started after it, which
 * Kargo only starts on a Healthy Stage), a later Progressing or Unknown is shown as such and the
 * Stage stays healthy for the release; Unhealthy still counts, and a failed Promotion or
 * verification is a failure.
 */
import type { KargoFreightRef, KargoPromotionState, KargoVerificationState } from '../facts/kargo-fact.js';
import type { RolloutPhase } from '../model/rollout.js';

export type KargoJudgement = 'promoting' | 'promotion-failed' | 'aborted' | 'waiting-health' | 'verifying' | 'verification-failed' | 'unhealthy' | 'healthy';

export interface KargoTargetState {
  /** The Stage object as last applied (Promotion facts carry their own resourceVersion in `promotion`). */
  stage?: { generation?: number; resourceVersion: string };
  freight?: Pick<KargoFreightRef, 'name' | 'alias' | 'images' | 'commits'>;
  promotion?: KargoPromotionState;
  health?: string;
  healthReason?: string;
  verification?: KargoVerificationState;
  verificationConfigured: boolean;
  targetAware: boolean;
  /** The latch: first seen healthy since `promotion` (ms). */
  healthyAt?: number;
  /** Done here: healthy since the Promotion and, when the Stage verifies, verified (ms). */
  doneAt?: number;
  judged: KargoJudgement;
}

export const ACTIVE_PROMOTION_PHASES: ReadonlySet<string> = new Set(['', 'Pending', 'Running']);
const FAILED_VERIFICATION = new Set(['Failed', 'Error']);

const PHASE_RANK: Record<string, number> = { '': 0, Pending: 1, Running: 2 };
/** Phases of one Promotion only move forward: '' → Pending → Running → a terminal phase. */
export const promotionPhaseRank = (phase: string): number => PHASE_RANK[phase] ?? 3;

const ULID = /^[0-9a-hjkmnp-tv-z]{26}$/i;

/** Promotions are named `<stage>.<ULID>.<freight7>` (ULIDs sort by time): < 0 when `a` is older than `b`, 0 when unknown or equal. */
export function comparePromotionNames(a: string, b: string): number {
  if (a === b) return 0;
  const ulid = (name: string) => name.split('.').find((part) => ULID.test(part))?.toUpperCase();
  const x = ulid(a);
  const y = ulid(b);
  if (!x || !y) return 0;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The same Promotion seen twice (by the Stage and by the Promotion itself): the later phase, and what either knows. */
export function mergePromotion(prev: KargoPromotionState | undefined, next: KargoPromotionState): KargoPromotionState {
  if (!prev || prev.name !== next.name) return next;
  const newer = promotionPhaseRank(next.phase) >= promotionPhaseRank(prev.phase) ? next : prev;
  const { step: _step, ...older } = newer === next ? prev : next;
  return {
    ...older,
    ...newer,
    ...(newer.actor ?? older.actor ? { actor: newer.actor ?? older.actor } : {}),
    ...(newer.failedStep ?? older.failedStep ? { failedStep: newer.failedStep ?? older.failedStep } : {}),
    ...(newer.message ?? older.message ? { message: newer.message ?? older.message } : {}),
    ...(next.resourceVersion ?? prev.resourceVersion ? { resourceVersion: next.resourceVersion ?? prev.resourceVersion } : {}),
  };
}

/** Evidence the Stage was healthy after its Promotion: Healthy now, or a verification of its Freight started since. */
export function healthyEvidence(k: Pick<KargoTargetState, 'promotion' | 'health' | 'verification'>): boolean {
  const p = k.promotion;
  if (p && p.phase !== 'Succeeded') return false;
  if (k.health === 'Healthy') return true;
  const v = k.verification;
  if (!v) return false;
  const started = Date.parse(v.startTime ?? '');
  const finished = Date.parse(p?.finishedAt ?? '');
  return Number.isNaN(started) || Number.isNaN(finished) || started >= finished;
}

function promotionText(p: KargoPromotionState): string {
  const what = p.via === 'PromotionRequest' ? 'PromotionRequest' : 'Promotion';
  const step = p.step ? ` (step ${p.step.number}${p.step.count ? `/${p.step.count}` : ''}${p.step.alias ? ` ${p.step.alias}` : ''})` : '';
  return `${what} ${p.phase || 'Pending'}${step}`;
}

/** The row and status a Kargo target shows, and why. */
export function judgeKargo(k: Omit<KargoTargetState, 'judged'>): { phase: RolloutPhase; message: string; aborted: boolean; judged: KargoJudgement } {
  const p = k.promotion;
  if (p && ACTIVE_PROMOTION_PHASES.has(p.phase)) return { phase: 'Progressing', message: promotionText(p), aborted: false, judged: 'promoting' };
  if (p && (p.phase === 'Failed' || p.phase === 'Errored')) {
    const at = p.failedStep ? ` at step ${p.failedStep.alias}` : '';
    const why = p.failedStep?.message ?? p.message;
    return { phase: 'Degraded', message: `${promotionText(p)}${at}${why ? `: ${why}` : ''}`, aborted: false, judged: 'promotion-failed' };
  }
  if (p && p.phase === 'Aborted') return { phase: 'Degraded', message: `${promotionText(p)}${p.message ? `: ${p.message}` : ''}`, aborted: true, judged: 'aborted' };
  const v = k.verification;
  if (v && FAILED_VERIFICATION.has(v.phase)) {
    return { phase: 'Degraded', message: `verification ${v.phase}${v.message ? `: ${v.message}` : ''}`, aborted: false, judged: 'verification-failed' };
  }
  if (k.health === 'Unhealthy') return { phase: 'Degraded', message: `Stage Unhealthy${k.healthReason ? `: ${k.healthReason}` : ''}`, aborted: false, judged: 'unhealthy' };
  if (k.healthyAt === undefined) {
    return { phase: 'Progressing', message: `Stage ${k.health ?? 'health not reported'}, not yet healthy since the Promotion`, aborted: false, judged: 'waiting-health' };
  }
  const now = k.health && k.health !== 'Healthy' ? ` · now ${k.health}` : '';
  if (k.verificationConfigured && v?.phase !== 'Successful') {
    return { phase: 'Progressing', message: `healthy since promotion${now} · verification ${v?.phase ?? 'Pending'}`, aborted: false, judged: 'verifying' };
  }
  return { phase: 'Healthy', message: now ? `healthy since promotion${now}` : '', aborted: false, judged: 'healthy' };
}
