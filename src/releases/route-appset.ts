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

/** The target key of a child Application (children live in their ApplicationSet's namespace). */
export function childTargetKey(appSet: TargetRef, application: string): string {
  return targetKey({ kind: 'Application', cluster: appSet.cluster, namespace: appSet.namespace, name: application });
}

export function childTargetKeys(fact: ApplicationSetFact): string[] {
  return fact.appSet.members.map((m) => childTargetKey(fact.target, m.application));
}

export interface AppSetRoute {
  pipeline: PipelineConfig;
  /** The first stage naming the ApplicationSet: the reducer updates every step stage from one fact. */
  stage: StageConfig;
  releaseId: string;
}

/**
 * Pure: `indexed` is, per pipeline, child target key → the release it runs (the worker reads it
 * from the target index). One route per pipeline and release.
 */
export function routeApplicationSet(config: ConfigFile, fact: ApplicationSetFact, indexed: ReadonlyMap<string, ReadonlyMap<string, string>>): AppSetRoute[] {
  const routes: AppSetRoute[] = [];
  for (const pipeline of pipelinesOfAppSet(config, fact.target)) {
    const stage = stagesOfAppSet(pipeline, fact.target)[0] as StageConfig;
    const known = indexed.get(pipeline.name);
    const ids = new Set<string>();
    // Thousands of children target a few revisions: each revision's release id is made once.
    const revisions = new Set<string>();
    for (const member of fact.appSet.members) {
      const running = known?.get(childTargetKey(fact.target, member.application));
      if (running !== undefined) ids.add(running);
      const revision = member.targetRevisions[0];
      if (revision) revisions.add(revision);
    }
    for (const revision of revisions) ids.add(revisionReleaseId(revision));
    for (const releaseId of [...ids].sort()) routes.push({ pipeline, stage, releaseId });
  }
  return routes;
}
