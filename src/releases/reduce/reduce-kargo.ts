/**
 * The reducer's Kargo rules (pure; reduce.ts hands over Kargo facts with the helpers it shares).
 *
 * - A Kargo Stage is a target of its pipeline stage. Its Stage fact (level-triggered: the whole
 *   object) and the facts of its Promotions update one target: the Stage says health and
 *   verification, a Promotion says its phase, its steps and who asked for it (create-actor).
 * - Stage facts and running Promotions open a release; a Pending or finished Promotion only
 *   updates a Stage the release has already (a relist of ~20 old Promotions opens nothing), and a
 *   Freight only enriches a release (alias, images, commit).
 * - A Stage that moves on to another Freight is a target moving to another release
 *   (`release.supersede`, as for Rollouts). An older Promotion, or an older Stage observation,
 *   changes nothing.
 * - A Stage without Freight joins the release in flight as a target still to start (pending); one
 *   that left the selection stops counting at once.
 * - The latch: src/releases/record/kargo-state.ts; the judgement: src/model/kargo-health.ts (`judgeStage`).
 */
import { targetKey, type KargoFreightFact, type KargoFreightRef, type KargoPromotionFact, type KargoStageFact, type TargetRef } from '../../facts/fact.js';
import type { KargoFact } from '../../facts/kargo-fact.js';
import type { ReduceContext } from './context.js';
import { healthyEvidence, judgeStage } from '../../model/kargo-health.js';
import { comparePromotionNames, mergePromotion, type KargoTargetState } from '../record/kargo-state.js';
import type { Effect, ReleaseRecord, StageState, TargetState } from '../record/record.js';
import type { Reduction } from './reduce-kit.js';
import { compareObservations } from '../record/versions.js';
import type { ReduceKit } from './reduce-kit.js';
import { editTarget } from '../record/target-edit.js';
import { dropTarget, putTarget } from '../record/target-writes.js';

/** What reduce.ts shares with these rules. */

type Kit = ReduceKit;
type KargoDraft = Omit<KargoTargetState, 'judged'>;

export function reduceKargo(current: ReleaseRecord | undefined, fact: KargoFact, ctx: ReduceContext, kit: Kit): Reduction {
  if (!ctx.pipeline.stages.some((s) => s.name === ctx.stage)) return kit.unchanged('ignored', `stage ${ctx.stage ?? '(none)'} is not in pipeline ${ctx.pipeline.name}`);
  switch (fact.kind) {
    case 'kargo-stage':
      return fact.removed || !fact.stage.freight ? reduceMembership(current, fact, ctx, kit) : reduceStage(current, fact, ctx, kit);
    case 'kargo-promotion':
      return reducePromotion(current, fact, ctx, kit);
    case 'kargo-freight':
      return reduceFreight(current, fact, ctx, kit);
  }
}

const stageOf = (record: ReleaseRecord, ctx: ReduceContext): StageState => record.stages.find((s) => s.name === ctx.stage) as StageState;

/** The Freight as a record keeps it: what it is and carries, not its annotations. */
function slim(freight: KargoFreightRef | undefined, known: KargoDraft['freight']): KargoDraft['freight'] {
  if (!freight) return known;
  const alias = freight.alias ?? (known?.name === freight.name ? known.alias : undefined);
  const images = freight.images.length > 0 || known?.name !== freight.name ? freight.images : known.images;
  return { name: freight.name, ...(alias ? { alias } : {}), images, commits: freight.commits };
}

function newestVersion(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareObservations({ resourceVersion: a }, { resourceVersion: b }) >= 0 ? a : b;
}

function heartbeat(record: ReleaseRecord, stage: StageState, target: TargetState, now: number, ctx: ReduceContext, kit: Kit): Reduction {
  const effects: Effect[] = [];
  record.counters.duplicate += 1;
  editTarget(stage, target, { lastHeardAt: Math.max(target.lastHeardAt, now) });
  stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
  kit.hear(record, now, effects);
  return kit.finish(record, now, ctx, 'heartbeat', effects);
}

/** Writes the judged target; `takesOver`: the Stage runs this release now, so the release it ran before hears it moved on. */
function apply(record: ReleaseRecord, stage: StageState, prev: TargetState | undefined, ref: TargetRef, draft: KargoDraft, observed: { uid?: string; resourceVersion?: string }, now: number, ctx: ReduceContext, kit: Kit, takesOver: boolean): Reduction {
  const key = targetKey(ref);
  const judged = judgeStage(draft);
  const kargo: KargoTargetState = { ...draft, ...(judged.phase === 'Healthy' && draft.doneAt === undefined ? { doneAt: now } : {}), judged: judged.judged };
  const resourceVersion = newestVersion(prev?.resourceVersion, observed.resourceVersion);
  const uid = observed.uid ?? prev?.uid;
  putTarget(stage.targets, key, {
    ref,
    ...(uid ? { uid } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    images: kargo.freight?.images ?? [],
    phase: judged.phase,
    message: judged.message,
    aborted: judged.aborted,
    phaseSince: prev && prev.phase === judged.phase && prev.supersededBy === undefined ? prev.phaseSince : now,
    lastHeardAt: now,
    kargo,
  });
  record.counters.facts += 1;
  if (record.images.length === 0 && kargo.freight && kargo.freight.images.length > 0) record.images = [...kargo.freight.images];
  const commit = kargo.freight?.commits.find((c) => c.id)?.id;
  if (!record.commit && commit) record.commit = commit;
  stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
  const effects: Effect[] = [];
  kit.hear(record, now, effects);
  const previous = ctx.previousReleaseOfTarget;
  if (takesOver && previous && previous !== record.releaseId) {
    effects.push({ id: `supersede:${key}:${previous}`, type: 'release.supersede', releaseId: previous, target: ref, at: resourceVersion ? { resourceVersion } : {} });
  }
  return kit.finish(record, now, ctx, 'applied', effects);
}

function reduceStage(current: ReleaseRecord | undefined, fact: KargoStageFact, ctx: ReduceContext, kit: Kit): Reduction {
  const obs = fact.stage;
  const freight = obs.freight as KargoFreightRef;
  const now = fact.receivedAt;
  const record = kit.openRecord(current, ctx, ctx.releaseId, ctx.idSource ?? 'freight', freight.images, now);
  const stage = stageOf(record, ctx);
  const key = targetKey(fact.target);
  const prev = stage.targets[key];
  const sameObject = prev !== undefined && (prev.uid === undefined || obs.uid === undefined || prev.uid === obs.uid);
  if (prev?.supersededAt && sameObject && compareObservations({ resourceVersion: obs.resourceVersion }, prev.supersededAt) <= 0) {
    return kit.unchanged('out-of-order', `Kargo Stage moved on to release ${prev.supersededBy ?? '?'} after this observation`);
  }
  const known = sameObject ? prev?.kargo : undefined;
  const order = known?.stage ? compareObservations(obs, known.stage) : 1;
  if (order < 0) return kit.unchanged('out-of-order', `Stage resourceVersion ${obs.resourceVersion} is older than what was seen`);
  if (order === 0 && prev) return heartbeat(record, stage, prev, now, ctx, kit);

  // The Stage's view of its Promotion, unless the Promotion itself told of a newer one already.
  let promotion = obs.promotion;
  if (known?.promotion && (!promotion || comparePromotionNames(promotion.name, known.promotion.name) < 0)) promotion = known.promotion;
  else if (promotion) promotion = mergePromotion(known?.promotion, promotion);
  const samePromotion = known !== undefined && known.promotion?.name === promotion?.name && known.freight?.name === freight.name;
  const draft: KargoDraft = {
    stage: { ...(obs.generation !== undefined ? { generation: obs.generation } : {}), resourceVersion: obs.resourceVersion },
    freight: slim(freight, known?.freight),
    ...(promotion ? { promotion } : {}),
    ...(obs.health ? { health: obs.health } : {}),
    ...(obs.healthReason ? { healthReason: obs.healthReason } : {}),
    ...(obs.verification ? { verification: obs.verification } : {}),
    verificationConfigured: obs.verificationConfigured,
    targetAware: obs.targetAware,
    ...(samePromotion && known.healthyAt !== undefined ? { healthyAt: known.healthyAt } : {}),
    ...(samePromotion && known.doneAt !== undefined ? { doneAt: known.doneAt } : {}),
  };
  if (draft.healthyAt === undefined && healthyEvidence(draft)) draft.healthyAt = now;
  return apply(record, stage, sameObject ? prev : undefined, fact.target, draft, { ...(obs.uid ? { uid: obs.uid } : {}), resourceVersion: obs.resourceVersion }, now, ctx, kit, true);
}

/** A Stage without Freight joins the release in flight (pending), or one left the selection (it stops counting). */
function reduceMembership(current: ReleaseRecord | undefined, fact: KargoStageFact, ctx: ReduceContext, kit: Kit): Reduction {
  if (!current) return kit.unchanged('ignored', fact.removed ? 'no release holds this Kargo Stage' : 'no release in flight for a Kargo Stage without Freight');
  const now = fact.receivedAt;
  const key = targetKey(fact.target);
  const before = current.stages.find((s) => s.name === ctx.stage);
  if (fact.removed && before?.targets[key] === undefined && !before?.pending.includes(key)) return kit.unchanged('ignored', 'the Kargo Stage is not part of this release');
  const record = kit.openRecord(current, ctx, current.releaseId, current.idSource, current.images, now);
  const stage = stageOf(record, ctx);
  const effects: Effect[] = [];
  if (fact.removed) {
    dropTarget(stage.targets, key);
    kit.addEvent(record, now, 'removed', `Kargo Stage ${fact.target.name} left stage ${stage.name}`, key);
    record.counters.facts += 1;
    return kit.finish(record, now, ctx, 'applied', effects);
  }
  stage.lastHeardAt = Math.max(stage.lastHeardAt ?? 0, now);
  kit.hear(record, now, effects);
  // Pending comes from the stage's known targets, which count this Stage from this batch on.
  return kit.finish(record, now, ctx, stage.pending.includes(key) ? 'heartbeat' : 'applied', effects);
}

function reducePromotion(current: ReleaseRecord | undefined, fact: KargoPromotionFact, ctx: ReduceContext, kit: Kit): Reduction {
  const p = fact.promotion;
  const running = p.phase === 'Running';
  if (!current && !running) return kit.unchanged('ignored', `a ${p.phase || 'new'} Promotion opens no release`);
  const key = targetKey(fact.target);
  const known = current?.stages.find((s) => s.name === ctx.stage)?.targets[key];
  if (!known && !running) return kit.unchanged('ignored', 'only a running Promotion adds a Kargo Stage to a release');
  const at = { resourceVersion: p.resourceVersion };
  if (known?.supersededAt && compareObservations(at, known.supersededAt) <= 0) {
    return kit.unchanged('out-of-order', `Kargo Stage moved on to release ${known.supersededBy ?? '?'} after this Promotion`);
  }
  const seen = known?.kargo?.promotion;
  if (seen && seen.name === p.name && seen.resourceVersion !== undefined && p.resourceVersion !== undefined) {
    const order = compareObservations(at, { resourceVersion: seen.resourceVersion });
    if (order < 0) return kit.unchanged('out-of-order', `Promotion ${p.name} resourceVersion ${p.resourceVersion} is older than what was seen`);
  } else if (seen && seen.name !== p.name && comparePromotionNames(p.name, seen.name) < 0) {
    return kit.unchanged('out-of-order', `Promotion ${p.name} is older than ${seen.name}`);
  }
  const now = fact.receivedAt;
  const record = kit.openRecord(current, ctx, ctx.releaseId, ctx.idSource ?? 'freight', fact.freight?.images ?? [], now);
  const stage = stageOf(record, ctx);
  const prev = stage.targets[key];
  if (prev && seen?.name === p.name && seen.resourceVersion === p.resourceVersion && seen.phase === p.phase) return heartbeat(record, stage, prev, now, ctx, kit);
  const k = prev?.kargo;
  const samePromotion = seen?.name === p.name;
  const draft: KargoDraft = {
    ...(k?.stage ? { stage: k.stage } : {}),
    freight: slim(fact.freight, k?.freight),
    promotion: mergePromotion(seen, p),
    ...(k?.health ? { health: k.health } : {}),
    ...(k?.healthReason ? { healthReason: k.healthReason } : {}),
    ...(samePromotion && k?.verification ? { verification: k.verification } : {}),
    verificationConfigured: k?.verificationConfigured ?? false,
    targetAware: k?.targetAware ?? false,
    // The latch is the Stage's to set: a Promotion fact does not see health.
    ...(samePromotion && k?.healthyAt !== undefined ? { healthyAt: k.healthyAt } : {}),
    ...(samePromotion && k?.doneAt !== undefined ? { doneAt: k.doneAt } : {}),
  };
  return apply(record, stage, prev, fact.target, draft, { ...(p.resourceVersion ? { resourceVersion: p.resourceVersion } : {}) }, now, ctx, kit, running);
}

/** A Freight only enriches a release that exists: its alias on the Stages that run it, the images and commit if the release has none. */
function reduceFreight(current: ReleaseRecord | undefined, fact: KargoFreightFact, ctx: ReduceContext, kit: Kit): Reduction {
  if (!current) return kit.unchanged('ignored', 'a Freight opens no release');
  const f = fact.freight;
  const commit = f.commits.find((c) => c.id)?.id;
  const stale = (t: TargetState) => t.kargo?.freight?.name === f.name && ((f.alias !== undefined && t.kargo.freight.alias !== f.alias) || (t.kargo.freight.images.length === 0 && f.images.length > 0));
  const news = current.stages.some((s) => Object.values(s.targets).some(stale)) || (current.images.length === 0 && f.images.length > 0) || (!current.commit && commit !== undefined);
  if (!news) return kit.unchanged('ignored', 'the release knows this Freight already');
  const now = fact.receivedAt;
  const record = kit.openRecord(current, ctx, current.releaseId, current.idSource, current.images, now);
  for (const stage of record.stages) {
    for (const t of Object.values(stage.targets)) {
      if (!stale(t) || !t.kargo?.freight) continue;
      editTarget(stage, t, { kargo: { ...t.kargo, freight: slim(f, t.kargo.freight) } });
    }
  }
  if (record.images.length === 0 && f.images.length > 0) record.images = [...f.images];
  if (!record.commit && commit) record.commit = commit;
  record.counters.facts += 1;
  return kit.finish(record, now, ctx, 'applied');
}
