/**
 * What a stall reply says besides the silence (pure): where the quiet stage is heard from, so the
 * reply names what may really be wrong (a notification lost, Glidepath's watch of a cluster down,
 * a controller not reconciling), and whether the release waits for a person besides (a canary
 * paused for approval, a Kargo stage to promote). A release waiting for a person stalls only when
 * it is silent, as a paused canary does (docs/reducer.md "Silence"): its targets are still heard
 * (each relist of the watch, a controller's resync), and silence means the source went quiet.
 */
import type { TargetRef } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import { stageDone } from './derive.js';
import type { ReleaseRecord, ReplyDetail, StallDetail } from '../record/record.js';


type Source = NonNullable<StallDetail['source']>;

/** The target (still in progress) heard from least recently: the most likely victim of a lost fact. */
function quietestTarget(record: ReleaseRecord): { stage: string; ref: TargetRef } | undefined {
  let best: { stage: string; ref: TargetRef; at: number } | undefined;
  for (const stage of record.stages) {
    if (stage.healthyAt !== undefined) continue;
    for (const t of Object.values(stage.targets)) {
      if (t.supersededBy === undefined && (!best || t.lastHeardAt < best.at)) best = { stage: stage.name, ref: t.ref, at: t.lastHeardAt };
    }
  }
  return best;
}

/** A person's move is next: a paused stage, or (nothing running) a done stage followed by a Kargo stage no Promotion reached yet. */
function awaiting(record: ReleaseRecord, ctx: ReduceContext): StallDetail['awaiting'] {
  const paused = record.stages.find((s) => s.status === 'Paused');
  if (paused) return { kind: 'approval', stage: paused.name };
  const next = record.stages.find((s) => !stageDone(s));
  if (!next || next === record.stages[0] || next.status !== 'Waiting') return undefined;
  if (!record.stages.every((s) => s.status === 'Waiting' || stageDone(s))) return undefined;
  return ctx.pipeline.stages.find((s) => s.name === next.name)?.kargo ? { kind: 'promotion', stage: next.name } : undefined;
}

/** The stall reply's stage, target and detail: about the quietest target's stage, else the first stage not done. */
export function stallReply(record: ReleaseRecord, ctx: ReduceContext, silentSince: number): { stage?: string; ref?: TargetRef; detail: ReplyDetail } {
  const quiet = quietestTarget(record);
  const stageName = quiet?.stage ?? (record.stages.find((s) => !stageDone(s)) ?? record.stages[0])?.name;
  const config = ctx.pipeline.stages.find((s) => s.name === stageName);
  const follows: Source['follows'] | undefined = config && (config.kargo ? 'kargo' : config.applicationSet ? 'applicationSet' : config.applications ? 'applications' : 'rollouts');
  const source: Source | undefined = config && follows ? { cluster: config.cluster, facts: ctx.clusterFacts?.[config.cluster] ?? 'webhook', follows } : undefined;
  const waits = awaiting(record, ctx);
  const stall: StallDetail = { ...(source ? { source } : {}), ...(waits ? { awaiting: waits } : {}) };
  return { ...(quiet ? { stage: quiet.stage, ref: quiet.ref } : {}), detail: { silentSince, stall } };
}
