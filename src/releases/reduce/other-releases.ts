/**
 * The other releases of a stage that mixes apps (`stage.otherReleases`, mixed-stage.ts), told from
 * a summary of the known targets grouped by release, made once per read of the target index: the
 * release ids sorted, and per app label each release's one value and how those values fall. With
 * 1,000 releases on one selector, every fact of every release used to sort all the other release
 * ids and check the split label against each of them (bench:curve, the releases curve: the split
 * label was a quarter of a fact). Per fact only the releases this one takes targets from are looked
 * at again: its own and its lineage's (removed), and those that lose targets it holds or shares an
 * app with (cut).
 */
import { targetKey } from '../../facts/fact.js';
import type { KnownTarget } from './context.js';
import type { MixedGroup, OtherReleases, TargetState } from '../record/record.js';

/** Labels that usually name an app, in the order a split is looked for. */
export const APP_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app'] as const;
export const MIXED_TARGETS_NAMED = 10;
export const MIXED_RELEASES_NAMED = 10;

type Groups = ReadonlyMap<string, readonly string[]>;

/** Of one app label: each release's one value over its targets, and how the values fall among the releases. */
interface LabelSummary {
  /** Undefined: the release's targets carry none, or not all the same. */
  valueOf: Map<string, string | undefined>;
  /** How many releases carry each value. */
  counts: Map<string, number>;
  /** Releases with no one value. */
  unsplit: number;
  /** Values that more than one release carries. */
  shared: number;
}

/** Release id → its targets, summarised; kept with the groups it was made from. */
export interface ReleaseSummary {
  groups: Groups;
  sorted: readonly string[];
  /** By label, made when a split on it is first looked for. */
  labels: Map<string, LabelSummary>;
}

/** Releases left out of the other releases (removed), and releases with some of their targets left out (cut: what is left). */
export interface Taken {
  removed: ReadonlySet<string>;
  cut: ReadonlyMap<string, readonly string[]>;
}

export function summarise(groups: Groups): ReleaseSummary {
  return { groups, sorted: [...groups.keys()].sort(), labels: new Map() };
}

/** The one value of `label` the targets carry, or undefined when one carries none or they differ. */
function oneValue(keys: readonly string[], label: string, known: ReadonlyMap<string, KnownTarget>): string | undefined {
  const value = keys.length > 0 ? known.get(keys[0] as string)?.appLabels?.[label] : undefined;
  if (value === undefined) return undefined;
  for (const key of keys) if (known.get(key)?.appLabels?.[label] !== value) return undefined;
  return value;
}

function labelSummary(summary: ReleaseSummary, label: string, known: ReadonlyMap<string, KnownTarget>): LabelSummary {
  let kept = summary.labels.get(label);
  if (kept) return kept;
  kept = { valueOf: new Map(), counts: new Map(), unsplit: 0, shared: 0 };
  for (const [releaseId, keys] of summary.groups) {
    const value = oneValue(keys, label, known);
    kept.valueOf.set(releaseId, value);
    if (value === undefined) kept.unsplit++;
    else {
      const count = (kept.counts.get(value) ?? 0) + 1;
      kept.counts.set(value, count);
      if (count === 2) kept.shared++;
    }
  }
  summary.labels.set(label, kept);
  return kept;
}

/** The keys of `releaseId` among the other releases: undefined when removed or cut to none. */
function keysOf(summary: ReleaseSummary, taken: Taken, releaseId: string): readonly string[] | undefined {
  if (taken.removed.has(releaseId)) return undefined;
  const keys = taken.cut.get(releaseId) ?? summary.groups.get(releaseId);
  return keys && keys.length > 0 ? keys : undefined;
}

/**
 * A label with one value among this release's own targets, one per other release, and different
 * values between the other releases: the label that splits the stage. Counted from the summary, corrected
 * for the releases taken.
 */
function splitLabel(own: readonly TargetState[], summary: ReleaseSummary, taken: Taken, known: ReadonlyMap<string, KnownTarget>): { label: string; value: string; valueOf: (releaseId: string) => string | undefined } | undefined {
  const changed = [...[...taken.removed].filter((r) => summary.groups.has(r)), ...[...taken.cut.keys()].filter((r) => !taken.removed.has(r))];
  for (const label of APP_LABELS) {
    const value = own[0]?.appLabels?.[label];
    if (value === undefined || own.some((t) => t.appLabels?.[label] !== value)) continue;
    const s = labelSummary(summary, label, known);
    let unsplit = s.unsplit;
    const delta = new Map<string, number>();
    const values = new Map<string, string | undefined>();
    const add = (v: string, d: number): void => void delta.set(v, (delta.get(v) ?? 0) + d);
    for (const releaseId of changed) {
      const before = s.valueOf.get(releaseId);
      if (before === undefined) unsplit--;
      else add(before, -1);
      const keys = keysOf(summary, taken, releaseId);
      if (!keys) continue;
      const after = oneValue(keys, label, known);
      values.set(releaseId, after);
      if (after === undefined) unsplit++;
      else add(after, 1);
    }
    let shared = s.shared;
    for (const [v, d] of delta) {
      const before = s.counts.get(v) ?? 0;
      if (before > 1 !== before + d > 1) shared += before + d > 1 ? 1 : -1;
    }
    // No other release carries this release's value: a target that carries it is the same app, still to start (mixed-stage.ts).
    if (unsplit === 0 && shared === 0) return { label, value, valueOf: (releaseId) => (values.has(releaseId) ? values.get(releaseId) : s.valueOf.get(releaseId)) };
  }
  return undefined;
}

function group(targets: readonly string[], app?: string): MixedGroup {
  const sorted = [...targets].sort();
  return { targets: sorted.slice(0, MIXED_TARGETS_NAMED), count: sorted.length, ...(app !== undefined ? { app } : {}) };
}

/**
 * `stage.otherReleases` for a release whose own active targets are `own`: the releases of the
 * summary but those taken, or undefined when none is left.
 */
export function otherReleases(own: readonly TargetState[], summary: ReleaseSummary, taken: Taken, known: ReadonlyMap<string, KnownTarget>): OtherReleases | undefined {
  let gone = 0;
  for (const releaseId of taken.removed) if (summary.groups.has(releaseId)) gone++;
  for (const [releaseId, keys] of taken.cut) if (!taken.removed.has(releaseId) && keys.length === 0) gone++;
  const releaseCount = summary.sorted.length - gone;
  if (releaseCount === 0) return undefined;
  const named: { releaseId: string; keys: readonly string[] }[] = [];
  for (const releaseId of summary.sorted) {
    if (named.length === MIXED_RELEASES_NAMED) break;
    const keys = keysOf(summary, taken, releaseId);
    if (keys) named.push({ releaseId, keys });
  }
  const split = splitLabel(own, summary, taken, known);
  return {
    own: group(
      own.map((t) => targetKey(t.ref)),
      split?.value,
    ),
    others: named.map(({ releaseId, keys }) => ({ releaseId, ...group(keys, split?.valueOf(releaseId)) })),
    releaseCount,
    ...(split ? { split: { label: split.label, value: split.value } } : {}),
  };
}
