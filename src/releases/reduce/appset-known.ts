/**
 * Step membership is a property of the ApplicationSet, not of a release. The worker keeps the
 * latest state heard of each ApplicationSet a pipeline names beside the records
 * (`appset-memberships.ts`, written whenever an ApplicationSet fact is processed, whether or not a
 * release takes it) and hands it to the reducer in `ReduceContext.appSets`. Pure rules here:
 *
 * - which of two states of one ApplicationSet is newer (one rule for the record and the side index);
 * - a record adopts the known state when it is newer than its own (a release opened after the
 *   ApplicationSet was heard starts from its membership and its entries' progress, and a record
 *   that missed an ApplicationSet fact catches up at its next fact);
 * - with the membership known, a child's facts go only to the stage of its step.
 */
import type { PipelineConfig, StageConfig } from '../../config/file.js';
import { targetKey, type ApplicationFact, type ApplicationSetFact, type Fact } from '../../facts/fact.js';
import type { AppSetMemberState, AppSetState } from '../record/appset-record.js';
import type { KnownAppSets, ReduceContext } from './context.js';
import type { ReleaseRecord } from '../record/record.js';
import { appSetKeyOfStage } from '../record/appset-record.js';
import { compareObservations } from '../record/versions.js';


/**
 * States made from facts, by fact: the worker keeps a fact's state beside the records
 * (appset-memberships.ts) and the reducer puts it in the record, and with one object for both the
 * thousands of members are indexed (derive-appset.ts) and encoded (appset-membership-codec.ts)
 * once. States are shared, so never changed in place (records replace them).
 */
const statesOfFacts = new WeakMap<ApplicationSetFact, AppSetState>();

/**
 * What the reducer keeps of an ApplicationSet fact (its `status.applicationStatus`, per child).
 * `previous`: the state of the same ApplicationSet this one follows, when the caller has it. Its
 * entries that did not change are reused as they are: a status write moves a few of thousands,
 * and an unchanged entry that stays the same object is indexed, encoded and compared once
 * (derive-appset.ts, appset-membership-codec.ts, the record codec).
 */
export function appSetStateOf(fact: ApplicationSetFact, previous?: AppSetState): AppSetState {
  let state = statesOfFacts.get(fact);
  if (!state) statesOfFacts.set(fact, (state = buildAppSetState(fact, previous)));
  return state;
}

/** The same entry: every field equal (entries are only ever built here, with their fields in one order). */
function sameMember(kept: AppSetMemberState, status: string, step: string, targetRevisions: readonly string[], message: string | undefined, since: string | undefined): boolean {
  if (kept.status !== status || kept.step !== step || kept.message !== (message || undefined) || kept.since !== (since || undefined)) return false;
  const revisions = kept.targetRevisions;
  if (revisions.length !== targetRevisions.length) return false;
  for (let i = 0; i < revisions.length; i++) if (revisions[i] !== targetRevisions[i]) return false;
  return true;
}

function buildAppSetState(fact: ApplicationSetFact, previous: AppSetState | undefined): AppSetState {
  const o = fact.appSet;
  const before = previous && previous.ref.cluster === fact.target.cluster && previous.ref.namespace === fact.target.namespace && previous.ref.name === fact.target.name ? previous.members : undefined;
  const members: AppSetState['members'] = {};
  for (const m of o.members) {
    const kept = before?.[m.application];
    members[m.application] =
      kept && sameMember(kept, m.status, m.step, m.targetRevisions, m.message, m.lastTransitionTime)
        ? kept
        : {
            status: m.status,
            step: m.step,
            targetRevisions: m.targetRevisions,
            ...(m.message ? { message: m.message } : {}),
            ...(m.lastTransitionTime ? { since: m.lastTransitionTime } : {}),
          };
  }
  const state: AppSetState = {
    ref: fact.target,
    ...(o.uid !== undefined ? { uid: o.uid } : {}),
    ...(o.generation !== undefined ? { generation: o.generation } : {}),
    ...(o.resourceVersion !== undefined ? { resourceVersion: o.resourceVersion } : {}),
    heardAt: fact.receivedAt,
    ...(o.stepCount !== undefined ? { stepCount: o.stepCount } : {}),
    members,
  };
  if (before) followedStates.set(state, previous!);
  return state;
}

/** The state each one was built after (appSetStateOf's `previous`): derive-appset.ts carries its index over. */
const followedStates = new WeakMap<AppSetState, AppSetState>();

/** The state `state` was built after, when it was built from one (same ApplicationSet). */
export function stateBefore(state: AppSetState): AppSetState | undefined {
  return followedStates.get(state);
}

/**
 * < 0 when `next` is older than `prev`, 0 when it is the same observation, > 0 when newer. One
 * object is ordered by generation and resourceVersion; an ApplicationSet re-created under the same
 * name (another uid) by when each was heard.
 */
export function compareAppSetStates(next: Pick<AppSetState, 'uid' | 'generation' | 'resourceVersion' | 'heardAt'>, prev: Pick<AppSetState, 'uid' | 'generation' | 'resourceVersion' | 'heardAt'> | undefined): number {
  if (!prev) return 1;
  if (prev.uid === undefined || next.uid === undefined || prev.uid === next.uid) return compareObservations(next, prev);
  return next.heardAt >= prev.heardAt ? 1 : -1;
}

/** The newer of the record's state of an ApplicationSet and the one known beside it. */
export function latestAppSet(record: ReleaseRecord | undefined, known: KnownAppSets | undefined, key: string): AppSetState | undefined {
  const own = record?.appSets?.[key];
  const side = known?.[key];
  if (!side) return own;
  return compareAppSetStates(side, own) > 0 ? side : own;
}

/** The ApplicationSets a pipeline's stages name, as target keys. */
export function namedAppSets(pipeline: PipelineConfig): string[] {
  return [...new Set(pipeline.stages.map(appSetKeyOfStage).filter((k): k is string => k !== undefined))];
}

/** The target key of the ApplicationSet that owns this child, if one does. */
export function appSetOwnerKey(fact: ApplicationFact): string | undefined {
  const name = fact.application.appSet;
  return name === undefined ? undefined : targetKey({ kind: 'ApplicationSet', cluster: fact.target.cluster, namespace: fact.target.namespace, name });
}

/**
 * The record takes the known state of each ApplicationSet its pipeline names when it is newer than
 * its own. `appSets` is replaced, never changed in place (the record codec reuses the encoding of
 * an unchanged map), and the known states are shared: never changed.
 */
export function adoptKnownAppSets(record: ReleaseRecord, pipeline: PipelineConfig, ctx: Pick<ReduceContext, 'appSets'>): void {
  const known = ctx.appSets;
  if (!known) return;
  let next: Record<string, AppSetState> | undefined;
  for (const key of namedAppSets(pipeline)) {
    const side = known[key];
    if (side && compareAppSetStates(side, record.appSets?.[key]) > 0) (next ??= { ...record.appSets })[key] = side;
  }
  if (next) record.appSets = next;
}

/**
 * With its ApplicationSet's membership known (per pipeline), a child's fact goes only to the stage
 * of its step (and to stages that name the ApplicationSet without a step). A child the
 * ApplicationSet does not list yet, or one whose ApplicationSet was not heard, goes everywhere it
 * did before: the reducer places it (reduce-appset.ts).
 */
export function placeChildRoutes<R extends { pipeline: PipelineConfig; stage?: StageConfig }>(routes: R[], fact: Fact, known: ReadonlyMap<string, KnownAppSets>): R[] {
  const owner = fact.kind === 'application' ? appSetOwnerKey(fact) : undefined;
  if (fact.kind !== 'application' || owner === undefined || known.size === 0) return routes;
  return routes.filter(({ pipeline, stage }) => {
    const step = stage?.applicationSet?.step;
    // Only a stage that names the ApplicationSet owning this child.
    if (!stage || step === undefined || appSetKeyOfStage(stage) !== owner) return true;
    const member = known.get(pipeline.name)?.[owner]?.members[fact.target.name];
    return member === undefined || member.step === String(step);
  });
}
