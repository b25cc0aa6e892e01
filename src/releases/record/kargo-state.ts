/**
 * What a release record keeps of a Kargo Stage target (pure): the Stage's Promotion, health and
 * verification as its facts told them, and the per-Promotion latch "healthy at least once since
 * this Promotion". The judgement itself has one home, src/model/kargo-health.ts (`judgeStage`),
 * which `/glidepath status` asks too, so the thread and status cannot disagree; the reducer
 * (reduce-kargo.ts) imports it from there.
 */
import type { KargoFreightRef, KargoPromotionState, KargoVerificationState } from '../../facts/kargo-fact.js';
import type { KargoJudgement } from '../../model/kargo-health.js';

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
