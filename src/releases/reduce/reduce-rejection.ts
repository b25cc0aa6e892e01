/**
 * A step of this release was rejected with a reason, or approved over a rejection (the action
 * engine feeds both back as facts): the stage keeps the latest, so the parent message shows who
 * holds the step and why, or who overrode it. Nothing else about the release changes.
 */
import type { RejectionFact } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import type { Reduction } from './reduce-kit.js';
import type { ReduceKit } from './reduce-kit.js';
import type { ReleaseRecord } from '../record/record.js';

export function reduceRejection(current: ReleaseRecord | undefined, fact: RejectionFact, ctx: ReduceContext, kit: ReduceKit): Reduction {
  if (!current) return kit.unchanged('ignored', 'release no longer exists');
  if (!current.stages.some((s) => s.name === fact.stage)) return kit.unchanged('ignored', `stage ${fact.stage} is not part of this release`);
  const record = kit.openRecord(current, ctx, current.releaseId, current.idSource, current.images, fact.receivedAt);
  const stage = record.stages.find((s) => s.name === fact.stage)!;
  const before = stage.rejection;
  // An override names the rejection it overrode: one of an older rejection leaves a newer one standing.
  if (fact.overriddenBy !== undefined && (before === undefined || before.by !== fact.by || before.reason !== fact.reason)) return kit.unchanged('ignored', 'the rejection it overrides is not the stage\'s latest');
  stage.rejection = { what: fact.what, by: fact.by, reason: fact.reason, at: before && fact.overriddenBy !== undefined ? before.at : fact.receivedAt, ...(fact.overriddenBy !== undefined ? { overriddenBy: fact.overriddenBy } : {}) };
  return kit.finish(record, fact.receivedAt, ctx, 'applied', []);
}
