/**
 * Targets are never changed in place: the record codec (record-codec.ts) keeps each target's
 * encoding by object identity and freezes what it encoded, so an edit replaces the target object
 * in its stage instead. A save then encodes and sends only the targets a fact replaced.
 */
import { targetKey } from '../../facts/fact.js';
import type { StageState, TargetState } from './record.js';
import { putTarget } from './target-writes.js';

/** Replaces `target` in `stage` with a copy carrying `patch`, and returns the copy. */
export function editTarget(stage: StageState, target: TargetState, patch: Partial<TargetState>): TargetState {
  const next: TargetState = { ...target, ...patch };
  const key = targetKey(target.ref);
  if (stage.targets[key] === target) {
    putTarget(stage.targets, key, next);
    return next;
  }
  for (const [k, t] of Object.entries(stage.targets)) {
    if (t !== target) continue;
    putTarget(stage.targets, k, next);
    return next;
  }
  throw new Error(`target ${key} is not in stage ${stage.name}`);
}
