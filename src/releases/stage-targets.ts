/**
 * A stage's targets as its status sees them (derive.ts, derive-appset.ts, kargo-derive.ts): the
 * targets still on this release, and the trouble among them that outranks progress.
 */
import type { StageState, StageStatus, TargetState } from './record.js';

/** The stage's targets that have not moved on to a newer release. */
export function activeTargets(stage: StageState): TargetState[] {
  return Object.values(stage.targets).filter((t) => t.supersededBy === undefined);
}

/** Aborted, then Degraded, then Paused, when one of the targets is; undefined otherwise. */
export function troubleStatus(targets: readonly TargetState[]): Extract<StageStatus, 'Aborted' | 'Degraded' | 'Paused'> | undefined {
  if (targets.some((t) => t.aborted)) return 'Aborted';
  if (targets.some((t) => t.phase === 'Degraded')) return 'Degraded';
  if (targets.some((t) => t.phase === 'Paused')) return 'Paused';
  return undefined;
}
