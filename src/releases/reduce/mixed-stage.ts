/**
 * A stage that mixes apps (issue 22 item 3). A stage selects its targets by label; when the label
 * is shared by apps released on their own (five Rollouts labelled `hangar.io/release-tracked=true`,
 * each with its own release id), a release of one app would wait for the others' targets forever
 * ("1/2 Healthy · 1 not started"). So a target the stage knows that runs another release is told
 * apart from one still to start:
 * - still to start: it runs a release this release's targets ran before (`record.movedFrom`, kept
 *   by the reducer when a target moves on to this release), or no release the index knows, or it
 *   carries the same app label value (APP_LABELS) as one of this release's own targets;
 * - another app's: it runs any other release. It is not pending for this release (the release
 *   completes when its own targets are done), and the stage says it mixes apps, once per thread.
 * Deterministic: it reads only the record and the target index's entries handed in the context.
 */
import type { Fact } from '../../facts/fact.js';
import type { KnownTarget, ReduceContext } from './context.js';
import { pendingTargets, sameKeys, sortedOnce } from '../record/pending.js';
import { activeTargets } from '../record/stage-targets.js';
import { keptSplit, splitInputs } from './mixed-stage-kept.js';
import { APP_LABELS, otherReleases, summarise, type ReleaseSummary, type Taken } from './other-releases.js';
import { targetKeys } from '../record/target-writes.js';
import type { ReleaseRecord, StageState, TargetState } from '../record/record.js';

const MOVED_FROM_KEPT = 20;
const NOTHING_TAKEN: Taken = { removed: new Set(), cut: new Map() };

/** Of `labels`, the app labels (bounded: APP_LABELS only), or undefined when there are none. */
export function appLabelsOf(labels: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const picked: Record<string, string> = {};
  for (const label of APP_LABELS) {
    const value = labels[label];
    if (value !== undefined) picked[label] = value;
  }
  return Object.keys(picked).length > 0 ? picked : undefined;
}

/** The target's app labels as a field of TargetState (none when it has none). */
export function appLabelsField(labels: Readonly<Record<string, string>>): { appLabels?: Record<string, string> } {
  const appLabels = appLabelsOf(labels);
  return appLabels ? { appLabels } : {};
}

/** A Rollout's or Application's app labels, as the target index keeps them (none for other facts). */
export function appLabelsOfFact(fact: Fact): { appLabels?: Record<string, string> } {
  return fact.kind === 'rollout' ? appLabelsField(fact.rollout.labels) : fact.kind === 'application' ? appLabelsField(fact.application.labels) : {};
}

/** A target moved on to this release from `previous`: a target still at `previous` is still to start here. */
export function noteMovedFrom(record: ReleaseRecord, previous: string): void {
  const movedFrom = record.movedFrom ?? [];
  if (movedFrom.at(-1) === previous) return;
  record.movedFrom = [...movedFrom.filter((r) => r !== previous), previous].slice(-MOVED_FROM_KEPT);
}

/**
 * A stage's known targets grouped by the release the target index says each runs, and by their
 * app label values: built once per read of the index and known list, not on every fact. Kept by
 * identity: the target index never changes a Map it handed out once a target's release or app
 * labels change (it hands out a new one: TargetIndex.recordMany), and never changes a known list
 * in place.
 */
interface KnownGroups {
  /** Release id ('' for a target the index names no release of) → its targets, in the known list's sorted order. */
  byRelease: ReadonlyMap<string, readonly string[]>;
  /** `label=value` of an app label (APP_LABELS) → the targets that carry it. */
  byApp: ReadonlyMap<string, readonly string[]>;
  /** byRelease summarised for the other releases (other-releases.ts). */
  releases: ReleaseSummary;
}

const grouped = new WeakMap<ReadonlyMap<string, KnownTarget>, WeakMap<readonly string[], KnownGroups>>();

function push(groups: Map<string, string[]>, key: string, value: string): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}

/** The known targets by release (groups in the order their first target sorts) and by app label value. */
function knownGroups(knownList: readonly string[], known: ReadonlyMap<string, KnownTarget>): KnownGroups {
  let byList = grouped.get(known);
  if (!byList) grouped.set(known, (byList = new WeakMap()));
  const kept = byList.get(knownList);
  if (kept) return kept;
  const byRelease = new Map<string, string[]>();
  const byApp = new Map<string, string[]>();
  for (const key of sortedOnce(knownList)) {
    const entry = known.get(key);
    push(byRelease, entry?.releaseId ?? '', key);
    const labels = entry?.appLabels;
    if (labels) for (const label of APP_LABELS) if (labels[label] !== undefined) push(byApp, `${label}=${labels[label]}`, key);
  }
  const groups = { byRelease, byApp, releases: summarise(byRelease) };
  byList.set(knownList, groups);
  return groups;
}

/**
 * The stage's pending targets (pendingTargets) split into those still to start and those that run
 * other apps' releases, and `stage.otherReleases` set. Only stages that select by labels
 * (Rollouts, Applications); an ApplicationSet step or a Kargo stage is left as it is. Returns the
 * pending list to keep (the same array when nothing changed).
 *
 * A stage whose selector 100 releases share knows thousands of targets, and every fact of every
 * release derives this: walking them all per fact was most of the reducer's time (bench:watch). So
 * it reads the known targets grouped (knownGroups): this release's and its lineage's groups are the
 * candidates still to start; another release's group is taken whole but for the targets this
 * stage holds and those carrying one of this release's app labels (the same app, still to start).
 * And a fact that changed no target's release, app labels or activity finds the split kept
 * (mixed-stage-kept.ts).
 */
export function stagePending(record: ReleaseRecord, stage: StageState, ctx: ReduceContext): string[] {
  const knownList = ctx.knownTargets?.[stage.name];
  const known = ctx.targetReleases;
  if (!known || !knownList) return derivePending(record, stage, ctx);
  return keptSplit(stage, splitInputs(record, ctx.pipeline, known, knownList, targetKeys(stage.targets)), () => derivePending(record, stage, ctx));
}

function derivePending(record: ReleaseRecord, stage: StageState, ctx: ReduceContext): string[] {
  const knownList = ctx.knownTargets?.[stage.name];
  const config = ctx.pipeline.stages.find((s) => s.name === stage.name);
  const known = ctx.targetReleases;
  // Checked before listing the stage's targets: an ApplicationSet step holds thousands.
  const own = known && config && (config.rollouts || config.applications) ? activeTargets(stage) : [];
  if (!known || own.length === 0) {
    delete stage.otherReleases;
    return pendingTargets(stage, knownList);
  }
  const ownApps = appValuesOf(own);
  if (!knownList) return splitOtherApps(record, stage, pendingTargets(stage, knownList), own, ownApps, known);
  const { byRelease, byApp, releases } = knownGroups(knownList, known);
  const ownish = new Set(['', record.releaseId, ...(record.movedFrom ?? [])]);
  // Not another app's though another release's: the targets this stage holds (not pending at all)
  // and those with one of this release's app label values (still to start).
  const held = new Set(targetKeys(stage.targets));
  const sameApp = new Set<string>();
  for (const app of ownApps) for (const key of byApp.get(app) ?? []) if (!held.has(key)) sameApp.add(key);
  // The other releases that lose a target to those two, with the targets they keep.
  const cut = new Map<string, readonly string[]>();
  for (const keys of [held, sameApp]) {
    for (const key of keys) {
      const releaseId = known.get(key)?.releaseId ?? '';
      const keysOfRelease = ownish.has(releaseId) || cut.has(releaseId) ? undefined : byRelease.get(releaseId);
      if (keysOfRelease) cut.set(releaseId, keysOfRelease.filter((k) => !held.has(k) && !sameApp.has(k)));
    }
  }
  const others = otherReleases(own, releases, { removed: ownish, cut }, known);
  // Nothing is another app's: every pending target is still to start, as pendingTargets lists them.
  if (!others) {
    delete stage.otherReleases;
    return pendingTargets(stage, knownList);
  }
  const stillToStart: string[] = [...sameApp].filter((key) => !ownish.has(known.get(key)?.releaseId ?? ''));
  for (const releaseId of ownish) for (const key of byRelease.get(releaseId) ?? []) if (!held.has(key)) stillToStart.push(key);
  stillToStart.sort();
  stage.otherReleases = others;
  return sameKeys(stage.pending, stillToStart) ? stage.pending : stillToStart;
}

/** This release's app label values, as `label=value`. */
function appValuesOf(own: readonly TargetState[]): Set<string> {
  return new Set(own.flatMap((t) => APP_LABELS.flatMap((label) => (t.appLabels?.[label] !== undefined ? [`${label}=${t.appLabels[label]}`] : []))));
}

/** The split walked target by target: for a stage whose own targets carry app labels, or without a known list. */
function splitOtherApps(record: ReleaseRecord, stage: StageState, pending: string[], own: readonly TargetState[], ownApps: ReadonlySet<string>, known: ReadonlyMap<string, KnownTarget>): string[] {
  const stillToStart: string[] = [];
  const others = new Map<string, string[]>();
  const lineage = new Set(record.movedFrom ?? []);
  // A target named as one of this release's apps (the same app label value) is the same app, not
  // yet moved on: without it a first release heard (no lineage yet) would complete early.
  const sameApp = (key: string): boolean => {
    const labels = known.get(key)?.appLabels;
    return labels !== undefined && APP_LABELS.some((label) => labels[label] !== undefined && ownApps.has(`${label}=${labels[label]}`));
  };
  for (const key of pending) {
    const releaseId = known.get(key)?.releaseId;
    if (releaseId === undefined || releaseId === '' || releaseId === record.releaseId || lineage.has(releaseId) || sameApp(key)) stillToStart.push(key);
    else (others.get(releaseId) ?? others.set(releaseId, []).get(releaseId)!).push(key);
  }
  if (others.size === 0) {
    delete stage.otherReleases;
    return pending;
  }
  stage.otherReleases = otherReleases(own, summarise(others), NOTHING_TAKEN, known);
  return sameKeys(stage.pending, stillToStart) ? stage.pending : stillToStart;
}

/** The notice's key: once per stage and thread, however the other releases change. */
export const mixedStageKey = (stage: string): string => `mixed-stage:${stage}`;
