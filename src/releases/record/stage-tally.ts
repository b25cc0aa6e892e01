/**
 * What a stage's status asks of its targets (derive.ts stageStatus), counted, and kept per targets
 * object: the next derivation adds and takes away only the targets written since (the write log
 * of target-writes.ts) instead of reading thousands of them again on every fact. Counts, not
 * flags, so a target replaced can be taken away. Pure bookkeeping beside the record; under test
 * (VITEST) each kept tally is checked against one counted from scratch.
 */
import type { TargetState } from './record.js';
import { VERIFY_KEPT_TARGETS, writePosition, writtenSince, type WriteMark } from './target-writes.js';

type Targets = Record<string, TargetState>;

/** Counts over a set of targets: stageStatus' order of trouble is Aborted, then Degraded, then Paused. */
export class TargetTally {
  count = 0;
  aborted = 0;
  degraded = 0;
  paused = 0;
  notHealthy = 0;

  add(t: TargetState, by: 1 | -1 = 1): void {
    this.count += by;
    if (t.aborted) this.aborted += by;
    if (t.phase === 'Degraded') this.degraded += by;
    else if (t.phase === 'Paused') this.paused += by;
    if (t.phase !== 'Healthy') this.notHealthy += by;
  }

  get allHealthy(): boolean {
    return this.notHealthy === 0;
  }

  trouble(): 'Aborted' | 'Degraded' | 'Paused' | undefined {
    return this.aborted > 0 ? 'Aborted' : this.degraded > 0 ? 'Degraded' : this.paused > 0 ? 'Paused' : undefined;
  }

  same(o: TargetTally): boolean {
    return this.count === o.count && this.aborted === o.aborted && this.degraded === o.degraded && this.paused === o.paused && this.notHealthy === o.notHealthy;
  }
}

/** The targets still on this release, and all of them. */
export interface StageTally {
  active: TargetTally;
  all: TargetTally;
}

interface Kept extends StageTally {
  mark: WriteMark;
  /** The target each key was counted as. */
  counted: Map<string, TargetState>;
}

const kept = new WeakMap<Targets, Kept>();

function count(into: StageTally, t: TargetState, by: 1 | -1): void {
  into.all.add(t, by);
  if (t.supersededBy === undefined) into.active.add(t, by);
}

function fromScratch(targets: Targets, keys: readonly string[]): Kept {
  const out: Kept = { active: new TargetTally(), all: new TargetTally(), mark: writePosition(targets), counted: new Map() };
  for (const key of keys) {
    const t = targets[key];
    if (t === undefined) continue;
    count(out, t, 1);
    out.counted.set(key, t);
  }
  return out;
}

/** The tally of `targets`, whose keys (targetKeys) are `keys`. */
export function stageTally(targets: Targets, keys: readonly string[]): StageTally {
  const before = kept.get(targets);
  const written = before ? writtenSince(targets, before.mark) : undefined;
  let tally: Kept;
  if (!before || !written) tally = fromScratch(targets, keys);
  else {
    tally = before;
    for (const key of new Set(written)) {
      const was = tally.counted.get(key);
      const now = targets[key];
      if (was === now) continue;
      if (was !== undefined) count(tally, was, -1);
      if (now !== undefined) {
        count(tally, now, 1);
        tally.counted.set(key, now);
      } else tally.counted.delete(key);
    }
    tally.mark = writePosition(targets);
    if (VERIFY_KEPT_TARGETS) {
      const check = fromScratch(targets, keys);
      if (!check.active.same(tally.active) || !check.all.same(tally.all)) throw new Error('a kept stage tally differs from a fresh count (src/releases/record/stage-tally.ts)');
    }
  }
  kept.set(targets, tally);
  return tally;
}
