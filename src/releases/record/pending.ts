/**
 * A stage's pending targets: those the target index knows for the stage that have not reported
 * this release yet, sorted. A stage can know thousands of targets while a release has a few, and
 * the reducer derives this on every fact, so the known list is sorted once per list (the target
 * index hands out the same read-only list until its targets change), and an unchanged result
 * keeps the stage's existing array (the record codec then reuses that array's encoding).
 */
import type { StageState, TargetState } from './record.js';
import { targetKeys } from './target-writes.js';

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

/**
 * The last pending list of a targets object, with what it was derived from: the known list (never
 * changed in place) and the targets' key list (target-writes.ts: replaced, never changed, when a
 * key comes or goes). Both the same objects: the same result, without filtering thousands of known
 * targets again on a fact that changed one target (bench/curve.ts). Invisible in results: the
 * result is a function of those two lists alone.
 */
const lastPending = new WeakMap<Record<string, TargetState>, { known: readonly string[]; keys: readonly string[]; pending: string[] }>();

/** The sorted keys of `known` (or, when the index knows none, of the stage's pending) not yet among its targets. */
export function pendingTargets(stage: StageState, known: readonly string[] | undefined): string[] {
  const notStarted = (k: string) => !Object.hasOwn(stage.targets, k);
  if (!known) {
    const next = stage.pending.filter(notStarted).sort();
    return sameKeys(stage.pending, next) ? stage.pending : next;
  }
  const keys = targetKeys(stage.targets);
  const last = lastPending.get(stage.targets);
  const kept = last && last.known === known && last.keys === keys ? last.pending : undefined;
  const next = kept ?? sortedOnce(known).filter(notStarted);
  // The stage's own array when equal (the codec reuses its encoding), kept as the result from now on.
  const pending = sameKeys(stage.pending, next) ? stage.pending : next;
  lastPending.set(stage.targets, { known, keys, pending });
  return pending;
}
