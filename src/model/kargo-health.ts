/**
 * Has a Kargo Stage been healthy since its last Promotion? Kargo recomputes health live, so an
 * autoscaling app turns a done Stage "Progressing" again (kargo#2847, #6886). Glidepath latches:
 * healthy once since the Promotion stays healthy through Progressing; Unhealthy (Degraded in Argo
 * CD) and a failed Promotion still count. Evidence of "once": Healthy now, a latch the caller kept,
 * or the Promotion's Freight verified in the Stage (verification only starts on a Healthy Stage).
 */
import type { Freight } from './kargo-freight.js';
import type { Stage } from './kargo-stage.js';

export type StageVerdict = 'healthy' | 'promoting' | 'progressing' | 'failed' | 'unknown';

export interface StageHealthSummary {
  stage: string;
  verdict: StageVerdict;
  /** Kargo's live `status.health.status`. */
  healthNow?: string;
  lastPromotion?: { name: string; phase?: string; freight?: string };
  healthySinceLastPromotion: boolean;
  reason: string;
}

const TERMINAL = new Set(['Succeeded', 'Failed', 'Errored', 'Aborted']);

export function summarizeStage(stage: Stage, promotedFreight: Freight | undefined, options: { seenHealthy?: boolean } = {}): StageHealthSummary {
  const name = stage.metadata.name;
  const status: Partial<NonNullable<Stage['status']>> = stage.status ?? {};
  const healthNow = status.health?.status;
  const last = status.lastPromotion;
  const lastPromotion = last?.name ? { name: last.name, phase: last.status?.phase, freight: last.freight?.name } : undefined;
  const base = { stage: name, ...(healthNow ? { healthNow } : {}), ...(lastPromotion ? { lastPromotion } : {}) };

  if (status.currentPromotion?.name) {
    return { ...base, verdict: 'promoting', healthySinceLastPromotion: false, reason: `Promotion ${status.currentPromotion.name} is running` };
  }
  const phase = lastPromotion?.phase;
  if (phase && TERMINAL.has(phase) && phase !== 'Succeeded') {
    const message = last?.status?.message ? `: ${last.status.message.slice(0, 300)}` : '';
    return { ...base, verdict: 'failed', healthySinceLastPromotion: false, reason: `last Promotion ${lastPromotion!.name} ${phase}${message}` };
  }
  if (healthNow === 'Unhealthy') {
    return { ...base, verdict: 'failed', healthySinceLastPromotion: false, reason: `${name} is Unhealthy` };
  }
  const verified = promotedFreight?.status?.verifiedIn?.[name];
  const verifiedAfter = verified && (!last?.finishedAt || !verified.verifiedAt || Date.parse(verified.verifiedAt) >= Date.parse(last.finishedAt));
  const everHealthy = healthNow === 'Healthy' || options.seenHealthy === true || Boolean(verifiedAfter);
  if (everHealthy) {
    const since = lastPromotion ? ` since Promotion ${lastPromotion.name}` : '';
    const now = healthNow && healthNow !== 'Healthy' ? ` (now ${healthNow}, which after being healthy is not a failure)` : '';
    return { ...base, verdict: 'healthy', healthySinceLastPromotion: true, reason: `${name} has been healthy${since}${now}` };
  }
  if (healthNow === 'Progressing') return { ...base, verdict: 'progressing', healthySinceLastPromotion: false, reason: `${name} is Progressing and has not been healthy since its last Promotion` };
  return { ...base, verdict: 'unknown', healthySinceLastPromotion: false, reason: `${name}'s health is ${healthNow ?? 'not reported'}` };
}
