/**
 * What `/glidepath status pipeline@stage` tells of a Kargo stage's Stages: what the thread would
 * say for each (the one judgement, src/model/kargo-health.ts, with the latch of the release that
 * follows the Stage under the same Promotion), the Freight it holds, and its current or last
 * Promotion — for a target-aware Stage its PromotionRequest (name, phase, Freight) — with when and
 * who. Text from the cluster is escaped and bounded.
 */
import { targetKey } from '../src/facts/fact.js';
import { KubeActionError } from '../src/kube/errors.js';
import { ACTIVE_PROMOTION_PHASES } from '../src/model/kargo-health.js';
import type { ReleaseRecord } from '../src/releases/record/record.js';
import { code, untrusted } from '../src/text/mrkdwn.js';
import type { CommandContext } from './types.js';
import type { StageRef } from './where.js';
import { exactStage } from './kargo-choice.js';

/** The latches the pipeline's releases keep for this Stage (in flight or finished: a Complete release still follows it). */
function latches(records: readonly ReleaseRecord[], stageName: string, key: string): { promotion?: string; healthyAt?: number }[] {
  return records.flatMap((r) => {
    const t = r.stages.find((s) => s.name === stageName)?.targets[key];
    if (!t?.kargo || t.supersededBy !== undefined) return [];
    return [{ ...(t.kargo.promotion ? { promotion: t.kargo.promotion.name } : {}), ...(t.kargo.healthyAt !== undefined ? { healthyAt: t.kargo.healthyAt } : {}) }];
  });
}

/** Who asked for each Promotion or PromotionRequest Glidepath made, by its name (newest audit entry wins). */
async function requesters(ctx: CommandContext): Promise<Map<string, string>> {
  const entries = await ctx.audit.list({ action: 'promote', limit: 200 });
  const byName = new Map<string, string>();
  for (const e of entries) {
    if (e.result !== 'done') continue;
    const after = e.after as { promotion?: string; promotionRequest?: string } | undefined;
    for (const name of [after?.promotion, after?.promotionRequest]) {
      if (name !== undefined && !byName.has(name)) byName.set(name, `<@${e.actor.slackUserId}>`);
    }
  }
  return byName;
}

export async function kargoStatusLines(ctx: CommandContext, ref: StageRef): Promise<string[]> {
  const kargo = ref.stage.kargo!;
  const cluster = ref.stage.cluster;
  const exact = exactStage(kargo.selection);
  const names = exact ? [exact] : (await ctx.kube.selectStages(cluster, kargo.selection)).map((s) => s.metadata.name);
  const records = await ctx.releases.list(ref.pipeline.name, { includeFinished: true, limit: 10 });
  const lines: string[] = [];
  // The audit stream is read once, at the first Stage with a Promotion (none when no Stage has one).
  let requested: Promise<Map<string, string>> | undefined;
  for (const name of names) {
    const where = code(`${kargo.project}/${name}`, 200);
    try {
      const followed = latches(records, ref.stage.name, targetKey({ kind: 'KargoStage', cluster, namespace: kargo.project, name }));
      const s = await ctx.kube.stageHealth(cluster, kargo.project, name, { followed });
      const r = s.reading;
      const p = r.promotion;
      const what = p?.via ?? (r.targetAware ? 'PromotionRequest' : 'Promotion');
      let promotion = `never promoted${r.targetAware ? ' (target-aware: promoted through PromotionRequests)' : ''}`;
      if (p) {
        const current = ACTIVE_PROMOTION_PHASES.has(p.phase);
        const who = (await (requested ??= requesters(ctx))).get(p.name);
        const freight = r.freight && (p.via === 'PromotionRequest' || r.freight.name !== r.heldFreight) ? ` of Freight ${code(r.freight.name, 64)}` : '';
        promotion =
          `${current ? 'current' : 'last'} ${what} ${code(p.name, 253)} ${untrusted(p.phase || 'Pending', 20, { oneLine: true })}${freight}` +
          `${!current && p.finishedAt ? ` at ${untrusted(p.finishedAt, 40, { oneLine: true })}` : ''}${who ? ` by ${who}` : ''}`;
      }
      const held = r.heldFreight ? code(r.heldFreight, 64) : 'none';
      const message = untrusted(s.message, 400, { oneLine: true });
      const since = s.healthySincePromotion ? `healthy at least once since that ${what}` : `not healthy since that ${what}`;
      const latch = s.latch === 'thread' ? " (the release thread's latch)" : '';
      lines.push(`• Kargo ${where} — ${s.aborted ? 'Aborted' : s.phase}${message ? `: ${message}` : ''} · holds Freight ${held} · ${promotion} · health now ${untrusted(r.health ?? 'unknown', 20, { oneLine: true })}; ${since}${latch}`);
    } catch (err) {
      lines.push(`• Kargo ${where}: ${untrusted(err instanceof KubeActionError ? err.message : String(err), 500, { oneLine: true })}`);
    }
  }
  return lines;
}
