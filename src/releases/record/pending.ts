/**
 * A stage's pending targets: those the target index knows for the stage that have not reported
 * this release yet, sorted. A stage can know thousands of targets while a release has a few, and
 * the reducer derives this on every fact, so the known list is sorted once per list (the target
 * index hands out the same read-only list until its targets change), and an unchanged result
 * keeps the stage's existing array (the record codec then reuses that array's encoding).
 */
import type { StageState } from './record.js';

const sortedCopies = new WeakMap<readonly string[], readonly string[]>();

/** `known`, sorted; computed once per list (lists of known targets are never changed in place). */
export function sortedOnce(known: readonly string[]): readonly string[] {
  let sorted = sortedCopies.get(known);
  if (!sorted) {
    sorted = [...known].sort();
    sortedCopies.set(known, sorted);
  }
  return sorted;
}

export function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The sorted keys of `known` (or, when the index knows none, of the stage's pending) not yet among its targets. */
export function pendingTargets(stage: StageState, known: readonly string[] | undefined): string[] {
  const notStarted = (k: string) => !Object.hasOwn(stage.targets, k);
  const next = known ? sortedOnce(known).filter(notStarted) : stage.pending.filter(notStarted).sort();
  return sameKeys(stage.pending, next) ? stage.pending : next;
}
