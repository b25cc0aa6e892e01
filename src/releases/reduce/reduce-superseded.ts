/**
 * A target of this release moved on to a newer one (the worker feeds the newer release's
 * supersede effect back as a fact): every copy of it says so, a pause it held is settled, and a
 * child kept aside before its ApplicationSet listed it is marked too.
 */
import { targetKey, type SupersededFact } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import { pauseSuperseded } from './pause-end.js';
import type { ReleaseRecord, TargetState } from '../record/record.js';
import type { Reduction } from './reduce-kit.js';
import type { ReduceKit } from './reduce-kit.js';
import { supersedeEveryCopy } from './reduce-appset.js';
import { compareObservations } from '../record/versions.js';

export function reduceSuperseded(current: ReleaseRecord | undefined, fact: SupersededFact, ctx: ReduceContext, kit: ReduceKit): Reduction {
  if (!current) return kit.unchanged('ignored', 'release no longer exists');
  const key = targetKey(fact.target);
  const stage = current.stages.find((s) => s.targets[key] !== undefined);
  const unlisted = current.unlistedChildren?.[key]?.target;
  if (!stage && unlisted && unlisted.supersededBy !== fact.byReleaseId && (unlisted.uid === undefined || compareObservations(unlisted, fact.at) <= 0)) {
    // A child kept aside moved on before its ApplicationSet listed it: placed, it counts as it last was here.
    const record = kit.openRecord(current, ctx, current.releaseId, current.idSource, current.images, fact.receivedAt);
    supersedeEveryCopy(record, key, fact.byReleaseId, fact.at);
    return kit.finish(record, fact.receivedAt, ctx, 'applied', []);
  }
  if (!stage) return kit.unchanged('ignored', `target ${key} is not part of this release`);
  const existing = stage.targets[key] as TargetState;
  if (existing.supersededBy === fact.byReleaseId) return kit.unchanged('ignored', 'already superseded');
  // The target came back to this release after the newer one took it: the newer observation wins.
  if (existing.uid !== undefined && compareObservations(existing, fact.at) > 0) return kit.unchanged('out-of-order', 'target is newer here');
  const record = kit.openRecord(current, ctx, current.releaseId, current.idSource, current.images, fact.receivedAt);
  const target = record.stages.find((s) => s.name === stage.name)?.targets[key] as TargetState;
  // Judged before the change below (a batch updates the record in place).
  const settled = pauseSuperseded(record, stage.name, target, fact.byReleaseId);
  supersedeEveryCopy(record, key, fact.byReleaseId, fact.at);
  kit.addEvent(record, fact.receivedAt, 'superseded', `moved on to release ${fact.byReleaseId}`, key);
  return kit.finish(record, fact.receivedAt, ctx, 'applied', settled);
}
