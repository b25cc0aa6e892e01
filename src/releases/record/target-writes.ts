/**
 * A stage's targets object, written through these two functions, keeps its key order listed and
 * a log of the keys written: a step stage of an ApplicationSet holds thousands of targets, and a
 * fact changes one. Object.keys of an object that large costs a sort (V8 keeps it as a hash
 * table) and the derivation and the save asked for it several times per fact; with the list kept
 * here, and the log saying which keys a fact wrote, they look at what changed instead.
 *
 * Pure bookkeeping beside the record (by object identity, in WeakMaps): a targets object never
 * listed here (a record just read, a copy) is listed once when first asked. A write that bypasses
 * putTarget/dropTarget would leave the list stale, so under test (VITEST) every listing is checked
 * against Object.keys and a stale one throws.
 */
import type { TargetState } from './record.js';

type Targets = Record<string, TargetState>;

interface Tracked {
  /** Undefined after a removal: listed again when next asked (a step's thousands of removals cost one listing, not one copy each). */
  keys: readonly string[] | undefined;
  /** Keys written (replaced, added or removed) in order; log[i] is write number base + i. */
  log: string[];
  base: number;
}

const tracked = new WeakMap<Targets, Tracked>();
/** Kept lists and tallies are checked against a fresh count: under test, or with GLIDEPATH_VERIFY_TARGET_KEYS=1 (0 turns it off). */
export const VERIFY_KEPT_TARGETS = process.env.GLIDEPATH_VERIFY_TARGET_KEYS !== undefined ? process.env.GLIDEPATH_VERIFY_TARGET_KEYS === '1' : process.env.VITEST !== undefined;

/** Integer-like keys enumerate first, in numeric order: a list kept by appending would be wrong for them. */
const indexLike = (key: string): boolean => key.length > 0 && key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57;

function trackedOf(targets: Targets): Tracked {
  let t = tracked.get(targets);
  if (!t) tracked.set(targets, (t = { keys: Object.keys(targets), log: [], base: 0 }));
  return t;
}

/** Object.keys(targets), as a read-only list that is replaced (never changed) when the keys change. */
export function targetKeys(targets: Targets): readonly string[] {
  const known = tracked.get(targets);
  if (known?.keys && VERIFY_KEPT_TARGETS) {
    const actual = Object.keys(targets);
    const keys = known.keys;
    if (actual.length !== keys.length || actual.some((k, i) => k !== keys[i])) throw new Error('a stage\'s targets were written around putTarget/dropTarget (src/releases/record/target-writes.ts)');
  }
  const t = known ?? trackedOf(targets);
  return (t.keys ??= Object.keys(targets));
}

function note(t: Tracked, key: string): void {
  t.log.push(key);
  // The log is for the next derivation and save: past a bound, readers that far behind list everything again.
  if (t.log.length > 4096 && t.log.length > 4 * (t.keys?.length ?? 0)) {
    t.base += t.log.length;
    t.log = [];
  }
}

export function putTarget(targets: Targets, key: string, target: TargetState): void {
  const t = tracked.get(targets);
  const added = !Object.hasOwn(targets, key);
  targets[key] = target;
  if (!t) return;
  if (added && indexLike(key)) {
    tracked.delete(targets);
    return;
  }
  if (added && t.keys) t.keys = [...t.keys, key];
  note(t, key);
}

export function dropTarget(targets: Targets, key: string): void {
  if (!Object.hasOwn(targets, key)) return;
  delete targets[key];
  const t = tracked.get(targets);
  if (!t) return;
  t.keys = undefined;
  note(t, key);
}

/** A place in the log of one targets object (writePosition). */
export interface WriteMark {
  readonly tracker: object;
  readonly at: number;
}

/** Where the log of `targets` is now (start tracking it). */
export function writePosition(targets: Targets): WriteMark {
  const t = trackedOf(targets);
  return { tracker: t, at: t.base + t.log.length };
}

/** The keys written since `mark` (duplicates possible), or undefined when that part of the log is gone or the mark is of another list. */
export function writtenSince(targets: Targets, mark: WriteMark): readonly string[] | undefined {
  const t = tracked.get(targets);
  if (!t || mark.tracker !== t || mark.at < t.base) return undefined;
  return t.log.slice(mark.at - t.base);
}
