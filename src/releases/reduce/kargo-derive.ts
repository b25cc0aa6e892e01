/**
 * The derived part of the Kargo rules, called by derive.ts: when a stage with Kargo Stage targets
 * is done (each target done under its current Promotion, not only the stage's latch), the Freight a
 * Promote button carries (what proved healthy here), and the replies a Kargo target is due: a
 * Promotion that failed, errored or was aborted (its failing step and message), a failed
 * verification (with its AnalysisRun), and Unhealthy that outlasts the grace. Kargo health is
 * recomputed live and flaps (an app syncing, autoscaling), so Unhealthy always gets the grace;
 * the reply is due when the grace ends, and a `release.recheck` effect brings it then.
 */
import type { TargetRef } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import type { ReplyDetail, ReplyKind, StageState, TargetState } from '../record/record.js';
import { activeTargets } from '../record/stage-targets.js';

interface Replies {
  reply(key: string, kind: ReplyKind, detail: ReplyDetail, stage?: string, target?: TargetRef): void;
  recheckAt(at: number): void;
}

/** The one Freight the stage's Kargo Stages proved healthy, for a Promote button toward the next stage. */
export function promotedFreight(stage: StageState): { freight: string } | Record<string, never> {
  const names = new Set(activeTargets(stage).flatMap((t) => (t.kargo?.freight ? [t.kargo.freight.name] : [])));
  const [only] = names;
  return names.size === 1 && only ? { freight: only } : {};
}

export function kargoNotices(notices: Replies, stage: StageState, t: TargetState, now: number, ctx: ReduceContext): void {
  const k = t.kargo;
  if (!k || t.supersededBy !== undefined) return;
  const where = `${t.ref.cluster}/${t.ref.namespace}/${t.ref.name}`;
  const p = k.promotion;
  if (p && (k.judged === 'promotion-failed' || k.judged === 'aborted')) {
    const message = p.failedStep?.message ?? p.message;
    notices.reply(
      `promotion-failed:${where}:${p.name}`,
      'promotion-failed',
      { promotion: p.name, via: p.via, phase: p.phase, ...(p.failedTarget ? { failedTarget: p.failedTarget } : {}), ...(p.failedStep ? { step: p.failedStep.alias } : {}), ...(message ? { message } : {}), ...(p.actor ? { actor: p.actor } : {}) },
      stage.name,
      t.ref,
    );
  }
  const v = k.verification;
  if (v && (v.phase === 'Failed' || v.phase === 'Error')) {
    notices.reply(
      `verification-failed:${where}:${v.id ?? v.analysisRun ?? v.startTime ?? p?.name ?? ''}`,
      'verification-failed',
      { phase: v.phase, ...(v.message ? { message: v.message } : {}), ...(v.analysisRun ? { analysisRun: v.analysisRun } : {}), ...(p ? { promotion: p.name } : {}) },
      stage.name,
      t.ref,
    );
  }
  if (k.judged === 'unhealthy') {
    // Reported when the grace ends, whether or not a fact arrives then: Kargo may say nothing more
    // until the next resync, so the release asks to be reduced again at that time.
    if (now - t.phaseSince >= ctx.unhealthyGraceMs) notices.reply(`degraded:${where}:${p?.name ?? ''}:${t.phaseSince}`, 'degraded', { message: t.message }, stage.name, t.ref);
    else notices.recheckAt(t.phaseSince + ctx.unhealthyGraceMs);
  }
}
