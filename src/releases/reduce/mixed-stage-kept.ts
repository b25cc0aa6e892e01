/**
 * The last split of a stage (mixed-stage.ts stagePending), kept with what it was derived from, so
 * a fact that changes one target's state does not walk the stage's thousands of known targets
 * again. The split reads the target index's entries and known list (never changed in place: a
 * change hands out new objects), the stage's target keys (a list replaced when a key comes or
 * goes: target-writes.ts), the release's id and lineage, the stage's config, and of each own
 * target only whether it is active and its app labels. A write since the split that changed
 * neither of those two leaves the split as it was (bench:curve: a canary step of one target in a
 * stage of 10,000).
 *
 * Invisible in results: under test (VERIFY_KEPT_TARGETS) every kept split is derived again and
 * compared, and a difference throws.
 */
import type { KnownTarget } from './context.js';
import type { PipelineConfig } from '../../config/file.js';
import { sameKeys } from '../record/pending.js';
import { VERIFY_KEPT_TARGETS, writePosition, writtenSince, type WriteMark } from '../record/target-writes.js';
import type { ReleaseRecord, StageState, TargetState } from '../record/record.js';

type Targets = Record<string, TargetState>;

/** What a split read, besides the targets object it is kept on. */
export interface SplitInputs {
  known: ReadonlyMap<string, KnownTarget>;
  knownList: readonly string[];
  keys: readonly string[];
  pipeline: PipelineConfig;
  /** The release id and its lineage (record.movedFrom), as one string. */
  lineage: string;
}

interface KeptSplit extends SplitInputs {
  mark: WriteMark;
  /** Each target's part the split reads (targetTrait), by key. */
  traits: Map<string, string>;
  pending: string[];
  otherReleases: StageState['otherReleases'];
}

const kept = new WeakMap<Targets, KeptSplit>();

/** Of a target, what the split reads: active or superseded, and its app labels. */
function targetTrait(t: TargetState | undefined): string {
  if (!t) return '';
  return `${t.supersededBy === undefined ? 'a' : 's'}${t.appLabels ? JSON.stringify(t.appLabels) : ''}`;
}

export function splitInputs(record: ReleaseRecord, pipeline: PipelineConfig, known: ReadonlyMap<string, KnownTarget>, knownList: readonly string[], keys: readonly string[]): SplitInputs {
  return { known, knownList, keys, pipeline, lineage: [record.releaseId, ...(record.movedFrom ?? [])].join('\n') };
}

/** The kept split of `stage`, when what it read is unchanged (the targets written since changed no trait). */
function stillHolds(stage: StageState, inputs: SplitInputs): KeptSplit | undefined {
  const last = kept.get(stage.targets);
  if (!last || last.known !== inputs.known || last.knownList !== inputs.knownList || last.keys !== inputs.keys || last.pipeline !== inputs.pipeline || last.lineage !== inputs.lineage) return undefined;
  const written = writtenSince(stage.targets, last.mark);
  if (!written) return undefined;
  for (const key of written) if (last.traits.get(key) !== targetTrait(stage.targets[key])) return undefined;
  last.mark = writePosition(stage.targets);
  return last;
}

/** The stage's pending list and other releases (set on the stage): the kept split while it holds, else `derive()`'s, kept from now on. */
export function keptSplit(stage: StageState, inputs: SplitInputs, derive: () => string[]): string[] {
  const last = stillHolds(stage, inputs);
  if (last) {
    if (VERIFY_KEPT_TARGETS) {
      const pending = derive();
      if (JSON.stringify(last.pending) !== JSON.stringify(pending) || JSON.stringify(last.otherReleases) !== JSON.stringify(stage.otherReleases)) {
        throw new Error('a kept mixed-stage split differs from a fresh one (src/releases/reduce/mixed-stage-kept.ts)');
      }
    }
    if (last.otherReleases) stage.otherReleases = last.otherReleases;
    else delete stage.otherReleases;
    // The stage's own array when equal: the codec reuses its encoding.
    return sameKeys(stage.pending, last.pending) ? stage.pending : last.pending;
  }
  const pending = derive();
  const traits = new Map<string, string>();
  for (const key of inputs.keys) traits.set(key, targetTrait(stage.targets[key]));
  kept.set(stage.targets, { ...inputs, mark: writePosition(stage.targets), traits, pending, otherReleases: stage.otherReleases });
  return pending;
}
