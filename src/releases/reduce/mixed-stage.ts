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
import { targetKey, type Fact } from '../../facts/fact.js';
import type { KnownTarget, ReduceContext } from './context.js';
import { sameKeys } from '../record/pending.js';
import { activeTargets } from '../record/stage-targets.js';
import { targetKeys } from '../record/target-writes.js';
import type { MixedGroup, ReleaseRecord, StageState, TargetState } from '../record/record.js';

/** Labels that usually name an app, in the order a split is looked for. */
export const APP_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app'] as const;
export const MIXED_TARGETS_NAMED = 10;
export const MIXED_RELEASES_NAMED = 10;
const MOVED_FROM_KEPT = 20;

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

function group(targets: string[], app?: string): MixedGroup {
  const sorted = [...targets].sort();
  return { targets: sorted.slice(0, MIXED_TARGETS_NAMED), count: sorted.length, ...(app !== undefined ? { app } : {}) };
}

/** A label with one value per release and different values between them: the label that splits the stage. */
function splitLabel(own: readonly TargetState[], others: ReadonlyMap<string, string[]>, known: ReadonlyMap<string, KnownTarget>): { label: string; values: Map<string, string> } | undefined {
  for (const label of APP_LABELS) {
    const values = new Map<string, string>();
    const ownValues = new Set(own.map((t) => t.appLabels?.[label]));
    if (ownValues.size !== 1 || ownValues.has(undefined)) continue;
    values.set('', [...ownValues][0] as string);
    let splits = true;
    for (const [releaseId, targets] of others) {
      const seen = new Set(targets.map((t) => known.get(t)?.appLabels?.[label]));
      const value = [...seen][0];
      if (seen.size !== 1 || value === undefined || [...values.values()].includes(value)) {
        splits = false;
        break;
      }
      values.set(releaseId, value);
    }
    if (splits) return { label, values };
  }
  return undefined;
}

/** What splitOtherApps decided for one stage: the targets still to start (undefined: all pending) and the other releases. */
interface Split {
  stillToStart?: string[];
  otherReleases?: NonNullable<StageState['otherReleases']>;
}

/**
 * Splits already made, by the target index's read (`ctx.targetReleases`), then the stage's known
 * list, then what the record contributes (splitInputs). A stage of a pipeline whose 100 releases
 * share one selector knows thousands of targets, and every fact of every release re-derived the
 * split over all of them (most of the reducer's time, bench:watch): the same inputs now give the
 * same answer from here. Sound because the index hands out a new Map whenever a target's release
 * or app labels change (TargetIndex.recordMany) and known lists are never changed in place; the
 * kept answers are shared between records and never changed either.
 */
const splitsMade = new WeakMap<ReadonlyMap<string, KnownTarget>, WeakMap<readonly string[], Map<string, Split>>>();
/** Splits kept per (read, known list): the releases of one pipeline, each stage once or a few times. */
const SPLITS_KEPT = 1_000;

/** Everything of the record the split reads besides the known targets: the release, its lineage, and each target's key, app labels and whether it moved on. */
function splitInputs(record: ReleaseRecord, stage: StageState): string {
  const parts: string[] = [record.releaseId, ...(record.movedFrom ?? []), ''];
  for (const key of targetKeys(stage.targets)) {
    const t = stage.targets[key] as TargetState;
    parts.push(key, t.supersededBy === undefined ? '' : '1', t.appLabels ? JSON.stringify(t.appLabels) : '');
  }
  return parts.join('\u0000');
}

/**
 * Splits the stage's pending targets (pendingTargets) into those still to start and those that run
 * other apps' releases, and sets `stage.otherReleases`. Only stages that select by labels
 * (Rollouts, Applications); an ApplicationSet step or a Kargo stage is left as it is. Returns the
 * pending list to keep (the same array when nothing was another app's). `knownList`: the stage's
 * known targets `pending` was derived from (ctx.knownTargets), when it was; a split of the same
 * read, list and record is then the one made before.
 */
export function splitOtherApps(record: ReleaseRecord, stage: StageState, pending: string[], ctx: ReduceContext, knownList?: readonly string[]): string[] {
  const config = ctx.pipeline.stages.find((s) => s.name === stage.name);
  const known = ctx.targetReleases;
  // Checked before listing the stage's targets: an ApplicationSet step holds thousands.
  const own = known && config && (config.rollouts || config.applications) ? activeTargets(stage) : [];
  if (!known || own.length === 0) {
    delete stage.otherReleases;
    return pending;
  }
  let kept: Map<string, Split> | undefined;
  let inputs = '';
  if (knownList) {
    let byList = splitsMade.get(known);
    if (!byList) splitsMade.set(known, (byList = new WeakMap()));
    kept = byList.get(knownList);
    if (!kept) byList.set(knownList, (kept = new Map()));
    inputs = splitInputs(record, stage);
  }
  let split = kept?.get(inputs);
  if (!split) {
    split = splitStage(record, own, pending, known);
    if (kept) {
      if (kept.size >= SPLITS_KEPT) kept.clear();
      kept.set(inputs, split);
    }
  }
  if (!split.otherReleases) {
    delete stage.otherReleases;
    return pending;
  }
  stage.otherReleases = split.otherReleases;
  const stillToStart = split.stillToStart as string[];
  return sameKeys(stage.pending, stillToStart) ? stage.pending : stillToStart;
}

function splitStage(record: ReleaseRecord, own: readonly TargetState[], pending: readonly string[], known: ReadonlyMap<string, KnownTarget>): Split {
  const stillToStart: string[] = [];
  const others = new Map<string, string[]>();
  const lineage = new Set(record.movedFrom ?? []);
  // A target named as one of this release's apps (the same app label value) is the same app, not
  // yet moved on: without it a first release heard (no lineage yet) would complete early.
  const ownApps = new Set(own.flatMap((t) => APP_LABELS.flatMap((label) => (t.appLabels?.[label] !== undefined ? [`${label}=${t.appLabels[label]}`] : []))));
  const sameApp = (key: string): boolean => {
    const labels = known.get(key)?.appLabels;
    return labels !== undefined && APP_LABELS.some((label) => labels[label] !== undefined && ownApps.has(`${label}=${labels[label]}`));
  };
  for (const key of pending) {
    const releaseId = known.get(key)?.releaseId;
    if (releaseId === undefined || releaseId === '' || releaseId === record.releaseId || lineage.has(releaseId) || sameApp(key)) stillToStart.push(key);
    else (others.get(releaseId) ?? others.set(releaseId, []).get(releaseId)!).push(key);
  }
  if (others.size === 0) return {};
  const split = splitLabel(own, others, known);
  const releaseIds = [...others.keys()].sort();
  return {
    stillToStart,
    otherReleases: {
      own: group(
        own.map((t) => targetKey(t.ref)),
        split?.values.get(''),
      ),
      others: releaseIds.slice(0, MIXED_RELEASES_NAMED).map((releaseId) => ({ releaseId, ...group(others.get(releaseId) as string[], split?.values.get(releaseId)) })),
      releaseCount: releaseIds.length,
      ...(split ? { split: { label: split.label, value: split.values.get('') as string } } : {}),
    },
  };
}

/** The notice's key: once per stage and thread, however the other releases change. */
export const mixedStageKey = (stage: string): string => `mixed-stage:${stage}`;
