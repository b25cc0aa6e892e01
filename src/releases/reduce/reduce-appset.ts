/**
 * ApplicationSet facts and the children of step stages, in the reducer (pure). The
 * ApplicationSet's `status.applicationStatus` says which RollingSync step each child is in and
 * how far it got; the record keeps it per ApplicationSet (`record.appSets`), and the step stages
 * are judged from it in derive-appset.ts.
 *
 * Placement of a child Application: once the ApplicationSet is heard (by this release, or by the
 * worker before it: the known membership, appset-known.ts), a child belongs only to the stage of
 * its step (a child it does not list yet belongs to none), and the worker routes its facts there
 * alone. Before that, its facts go to every stage naming its ApplicationSet and every step stage
 * holds it: a guess, so no step stage is Healthy until the ApplicationSet is heard (derive-appset.ts).
 */
import type { PipelineConfig, StageConfig } from '../../config/file.js';
import { targetKey, type ApplicationFact, type ApplicationSetFact } from '../../facts/fact.js';
import { appSetKeyOfStage, type AppSetState } from '../record/appset-record.js';
import { appSetStateOf, latestAppSet } from './appset-known.js';
import type { KnownAppSets, ReduceContext } from './context.js';
import type { Effect, ReleaseRecord, TargetState } from '../record/record.js';
import type { Reduction } from './reduce-kit.js';
import { compareObservations } from '../record/versions.js';
import type { ReduceKit } from './reduce-kit.js';
import { putTarget } from '../record/target-writes.js';


/**
 * What an Application target keeps for the revision rule: the revision it was compared against,
 * its sync status there, and when Argo CD last compared it in full (`reconciledAt`: the evidence
 * that a child behind was judged after a later step started, derive-appset.ts).
 */
export function applicationTargetFields(fact: ApplicationFact): Pick<TargetState, 'revision' | 'revisions' | 'syncStatus' | 'reconciledAt' | 'staleComparison' | 'healthSince'> {
  const { revisions, syncStatus, reconciledAt, comparison, healthSince } = fact.application;
  const revision = revisions[0];
  return {
    ...(revision !== undefined ? { revision } : {}),
    ...(revisions.length > 1 ? { revisions: [...revisions] } : {}),
    ...(syncStatus !== undefined ? { syncStatus } : {}),
    ...(reconciledAt !== undefined ? { reconciledAt } : {}),
    ...(comparison === 'stale' ? { staleComparison: true as const } : {}),
    ...(healthSince !== undefined ? { healthSince } : {}),
  };
}

/**
 * Where the record meets the config (alignStages): a stage whose config names no ApplicationSet
 * any more loses its step row, and an ApplicationSet no stage names is forgotten. Records only
 * ever replace `appSets` (the codec reuses the encoding of an unchanged one), so it is replaced
 * here too, and only when something goes.
 */
export function dropUnnamedAppSets(record: ReleaseRecord, pipeline: PipelineConfig): void {
  const named = new Set<string>();
  for (const config of pipeline.stages) {
    const key = appSetKeyOfStage(config);
    if (key !== undefined) named.add(key);
    else {
      const stage = record.stages.find((s) => s.name === config.name);
      if (stage?.stepProgress) delete stage.stepProgress;
    }
  }
  const appSets = record.appSets;
  if (!appSets) return;
  const kept = Object.entries(appSets).filter(([key]) => named.has(key));
  if (kept.length === Object.keys(appSets).length) return;
  if (kept.length === 0) delete record.appSets;
  else record.appSets = Object.fromEntries(kept);
}

/** Where a child's fact goes in a step stage: its row, the record's unlisted children, or nowhere. */
export type ChildPlacement = { kind: 'here' } | { kind: 'unlisted'; appSet: string } | { kind: 'elsewhere'; reason: string };

/**
 * Where a child's fact goes, by the newer of the record's membership and the one known beside it
 * (`known`, appset-known.ts). A child the ApplicationSet does not list yet is kept aside, not
 * dropped: the ApplicationSet writes its status after it creates the child, and the child's own
 * facts, on another stream, often come first (a Healthy dropped then is not heard again).
 */
export function childPlacement(record: ReleaseRecord | undefined, stage: StageConfig, fact: ApplicationFact, known?: KnownAppSets): ChildPlacement {
  const step = stage.applicationSet?.step;
  const key = appSetKeyOfStage(stage);
  if (step === undefined || key === undefined) return { kind: 'here' };
  const appSet = latestAppSet(record, known, key);
  if (!appSet) return { kind: 'here' };
  const member = appSet.members[fact.target.name];
  if (!member) return { kind: 'unlisted', appSet: key };
  return member.step === String(step) ? { kind: 'here' } : { kind: 'elsewhere', reason: `${fact.target.name} is in step ${member.step}, not ${step}` };
}

/** Unlisted children a record keeps at most: the least recently heard go first. */
export const MAX_UNLISTED_CHILDREN = 200;

/**
 * Keeps a child's target aside until its ApplicationSet lists it, unless a newer observation of
 * it is kept already (replaced, never changed in place).
 */
export function keepUnlisted(record: ReleaseRecord, key: string, appSet: string, target: TargetState): void {
  const held = record.unlistedChildren?.[key]?.target;
  if (held && held !== target && compareObservations(target, held) < 0) return;
  const kept = { ...record.unlistedChildren, [key]: { appSet, target } };
  const keys = Object.keys(kept);
  if (keys.length > MAX_UNLISTED_CHILDREN) {
    keys.sort((a, b) => kept[a]!.target.lastHeardAt - kept[b]!.target.lastHeardAt);
    for (const k of keys.slice(0, keys.length - MAX_UNLISTED_CHILDREN)) delete kept[k];
  }
  record.unlistedChildren = kept;
}

/**
 * Each unlisted child its ApplicationSet now lists goes into the rows of its step (and rows that
 * name the ApplicationSet without a step), unless a row holds a newer observation of it, and
 * leaves the unlisted ones. Run before the rows are judged.
 */
export function placeListedChildren(record: ReleaseRecord, pipeline: PipelineConfig): void {
  const unlisted = record.unlistedChildren;
  if (!unlisted || !record.appSets) return;
  let left: typeof unlisted | undefined;
  for (const [key, { appSet, target }] of Object.entries(unlisted)) {
    const member = record.appSets[appSet]?.members[target.ref.name];
    if (!member) continue;
    for (const config of pipeline.stages) {
      const step = config.applicationSet?.step;
      if (appSetKeyOfStage(config) !== appSet || (step !== undefined && member.step !== String(step))) continue;
      const stage = record.stages.find((s) => s.name === config.name);
      const held = stage?.targets[key];
      if (stage && (!held || compareObservations(target, held) > 0)) putTarget(stage.targets, key, target);
    }
    left ??= { ...unlisted };
    delete left[key];
  }
  if (!left) return;
  if (Object.keys(left).length === 0) delete record.unlistedChildren;
  else record.unlistedChildren = left;
}

/**
 * A target moves on to a newer release in every row that holds it: a child placed in every step
 * stage before the ApplicationSet was heard is one target in several rows, and once the membership
 * is known only the row of its step keeps it (which must say it moved on).
 */
export function supersedeEveryCopy(record: ReleaseRecord, key: string, byReleaseId: string, at: NonNullable<TargetState['supersededAt']>): void {
  for (const stage of record.stages) {
    const target = stage.targets[key];
    if (!target) continue;
    putTarget(stage.targets, key, { ...target, supersededBy: byReleaseId, supersededAt: at });
  }
  const unlisted = record.unlistedChildren?.[key];
  if (unlisted) keepUnlisted(record, key, unlisted.appSet, { ...unlisted.target, supersededBy: byReleaseId, supersededAt: at });
}

/**
 * The latest revision a child of the release reported (for a release keyed by revision, the one
 * that keyed it). Only a label of the release: each child is judged at its own revisions
 * (derive-appset.ts).
 */
export function noteRevision(record: ReleaseRecord, fact: ApplicationFact): void {
  const revision = fact.application.revisions[0];
  if (revision !== undefined) record.revision = revision;
}

/**
 * An ApplicationSet fact updates the step membership of the releases its children run. It never
 * opens a release: a release is what its children run (or what CI announced).
 */
export function reduceApplicationSet(current: ReleaseRecord | undefined, fact: ApplicationSetFact, ctx: ReduceContext, tools: ReduceKit): Reduction {
  if (!current) return tools.unchanged('ignored', 'an ApplicationSet opens no release: its children do');
  const key = targetKey(fact.target);
  const prev = current.appSets?.[key];
  const sameObject = prev !== undefined && (prev.uid === undefined || prev.uid === fact.appSet.uid);
  const order = prev && sameObject ? compareObservations(fact.appSet, prev) : 1;
  if (order < 0) return tools.unchanged('out-of-order', `resourceVersion ${fact.appSet.resourceVersion ?? '?'} of ${key} is older than what was seen`);
  const now = fact.receivedAt;
  const record = tools.openRecord(current, ctx, current.releaseId, current.idSource, current.images, current.updatedAt);
  const effects: Effect[] = [];
  const appSets = record.appSets ?? {};
  if (order === 0 && prev) {
    record.counters.duplicate += 1;
    // Replaced, never changed in place: the record codec reuses the encoding of an unchanged map.
    const same = appSets[key] as AppSetState;
    record.appSets = { ...appSets, [key]: { ...same, heardAt: Math.max(same.heardAt, now) } };
    tools.hear(record, now, effects);
    return tools.finish(record, now, ctx, 'heartbeat', effects);
  }
  record.counters.facts += 1;
  record.appSets = { ...appSets, [key]: appSetStateOf(fact, sameObject ? prev : undefined) };
  tools.hear(record, now, effects);
  return tools.finish(record, now, ctx, 'applied', effects);
}
