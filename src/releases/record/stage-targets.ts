/**
 * A stage's targets as its status sees them (derive.ts, derive-appset.ts, kargo-derive.ts): the
 * targets still on this release, and the trouble among them that outranks progress.
 */
import type { StageState, StageStatus, TargetState } from './record.js';
import { targetKeys } from './target-writes.js';

/**
 * The stage's targets that have not moved on to a newer release. Read through the keys: a step
 * stage of an ApplicationSet holds thousands of targets, and Object.values on an object that
 * large costs several times Object.keys and the lookups.
 */
export function activeTargets(stage: StageState): TargetState[] {
  const active: TargetState[] = [];
  const targets = stage.targets;
  for (const key of targetKeys(targets)) {
    const t = targets[key] as TargetState;
    if (t.supersededBy === undefined) active.push(t);
  }
  return active;
}

/** Aborted, then Degraded, then Paused, when one of the targets is; undefined otherwise. */
export function troubleStatus(targets: readonly TargetState[]): Extract<StageStatus, 'Aborted' | 'Degraded' | 'Paused'> | undefined {
  if (targets.some((t) => t.aborted)) return 'Aborted';
  if (targets.some((t) => t.phase === 'Degraded')) return 'Degraded';
  if (targets.some((t) => t.phase === 'Paused')) return 'Paused';
  return undefined;
}
