/**
 * Where an ApplicationSet fact goes: to the pipelines whose applicationSet stages name it, and
 * there to the releases its children run. A child's release is what the target index says it
 * runs (its release id annotation or revision, as its own facts were routed) and, beside it, the
 * release keyed by the revision the ApplicationSet says the child targets (`revision-<12>`): the
 * ApplicationSet often hears of a new revision before the child's own fact has been reduced. An
 * ApplicationSet fact never opens a release (reduce-appset.ts), so a revision no child runs costs
 * one ignored fact.
 */
import type { ConfigFile, PipelineConfig, StageConfig } from '../config/file.js';
import { targetKey, type ApplicationSetFact, type TargetRef } from '../facts/fact.js';
import { revisionReleaseId } from './route.js';

/** The stages of a pipeline that name this ApplicationSet (in pipeline order). */
export function stagesOfAppSet(pipeline: PipelineConfig, ref: TargetRef): StageConfig[] {
  return pipeline.stages.filter((s) => s.cluster === ref.cluster && s.applicationSet?.namespace === ref.namespace && s.applicationSet.name === ref.name);
}

export function pipelinesOfAppSet(config: ConfigFile, ref: TargetRef): PipelineConfig[] {
  return config.pipelines.filter((p) => stagesOfAppSet(p, ref).length > 0);
}

/**
 * Child target keys, by cluster, namespace and child name: routing, the side index and the
 * reducer name every child of an ApplicationSet (thousands) on each of its facts. One string per
 * child, made once, is also a cheap key: a string used before as a property name or Map key is
 * found again without being hashed and interned anew. A key depends only on the names, so the
 * cache cannot change a result; it is dropped whole past a bound.
 */
const childKeys = new Map<string, Map<string, Map<string, string>>>();
let cachedChildKeys = 0;
const MAX_CACHED_CHILD_KEYS = 100_000;

/** The target key of a child Application (children live in their ApplicationSet's namespace). */
export function childTargetKey(appSet: TargetRef, application: string): string {
  let inCluster = childKeys.get(appSet.cluster);
  let byName = inCluster?.get(appSet.namespace);
  let key = byName?.get(application);
  if (key !== undefined) return key;
  if (cachedChildKeys >= MAX_CACHED_CHILD_KEYS) {
    childKeys.clear();
    inCluster = byName = undefined;
    cachedChildKeys = 0;
  }
  if (!inCluster) childKeys.set(appSet.cluster, (inCluster = new Map()));
  if (!byName) inCluster.set(appSet.namespace, (byName = new Map()));
  key = targetKey({ kind: 'Application', cluster: appSet.cluster, namespace: appSet.namespace, name: application });
  byName.set(application, key);
  cachedChildKeys += 1;
  return key;
}

/** Each fact's child keys, in member order, made once for routing and the side index. */
const keysOfFacts = new WeakMap<ApplicationSetFact, string[]>();

export function childTargetKeys(fact: ApplicationSetFact): string[] {
  let keys = keysOfFacts.get(fact);
  if (!keys) keysOfFacts.set(fact, (keys = fact.appSet.members.map((m) => childTargetKey(fact.target, m.application))));
  return keys;
}

export interface AppSetRoute {
  pipeline: PipelineConfig;
  /** The first stage naming the ApplicationSet: the reducer updates every step stage from one fact. */
  stage: StageConfig;
  releaseId: string;
}

/**
 * Pure: `indexed` is, per pipeline, child target key → the release it runs (the worker reads it
 * from the target index, one child per release it finds: the routes are per release, so the
 * other children running it change nothing). One route per pipeline and release.
 */
export function routeApplicationSet(config: ConfigFile, fact: ApplicationSetFact, indexed: ReadonlyMap<string, ReadonlyMap<string, string>>): AppSetRoute[] {
  const routes: AppSetRoute[] = [];
  for (const pipeline of pipelinesOfAppSet(config, fact.target)) {
    const stage = stagesOfAppSet(pipeline, fact.target)[0] as StageConfig;
    const known = indexed.get(pipeline.name);
    const ids = new Set<string>();
    // Thousands of children target a few revisions: each revision's release id is made once.
    const revisions = new Set<string>();
    const keys = childTargetKeys(fact);
    const members = fact.appSet.members;
    for (let i = 0; i < members.length; i++) {
      const member = members[i]!;
      const running = known?.get(keys[i] as string);
      if (running !== undefined) ids.add(running);
      const revision = member.targetRevisions[0];
      if (revision) revisions.add(revision);
    }
    for (const revision of revisions) ids.add(revisionReleaseId(revision));
    for (const releaseId of [...ids].sort()) routes.push({ pipeline, stage, releaseId });
  }
  return routes;
}
