/**
 * Which pipeline stages a Kargo fact belongs to, and under which release id. A Kargo Stage is a
 * target of every pipeline stage whose selection (Kargo's stageSelector grammar, compiled at
 * config load) selects it. A Kargo release is keyed by the release id its Freight's images carry
 * (the pipeline's release id annotation, which Kargo records from the images' OCI annotations),
 * else by its Freight (`freight-<name>`); the reducer worker replaces the latter with the id of a
 * CI announcement of the same images, when there was one (src/routing/kargo-route-hints.ts).
 */
import type { ConfigFile, PipelineConfig, StageConfig } from '../config/file.js';
import type { KargoFact, KargoFreightRef, KargoStageFact } from '../facts/kargo-fact.js';
import { releaseIdSchema } from '../facts/schemas.js';
import { selectsKargoStage } from '../model/kargo-stage-selector.js';
import { cutCodePoints } from '../model/unicode.js';
import { FREIGHT_RELEASE_PREFIX } from '../releases/record/release-ids.js';
import type { Route } from './route-types.js';

export function kargoReleaseId(pipeline: PipelineConfig, freight: KargoFreightRef): Pick<Route, 'releaseId' | 'idSource'> | undefined {
  const annotated = freight.annotations[pipeline.releaseIdAnnotation];
  if (annotated !== undefined && releaseIdSchema.safeParse(annotated).success) return { releaseId: annotated, idSource: 'annotation' };
  if (!freight.resolved) return undefined;
  const id = `${FREIGHT_RELEASE_PREFIX}${cutCodePoints(freight.name, 64)}`;
  return releaseIdSchema.safeParse(id).success ? { releaseId: id, idSource: 'freight' } : undefined;
}

/** Whether a pipeline stage selects the Kargo Stage `cluster/namespace/name` with these labels (unknown labels select only by name). */
export function stageSelectsKargoStage(stage: StageConfig, cluster: string, namespace: string, name: string, labels: Readonly<Record<string, string>> | undefined): boolean {
  const selection = stage.kargo?.selection;
  if (!selection || stage.cluster !== cluster) return false;
  if (labels === undefined && selection.labels) return false;
  return selectsKargoStage(selection, { namespace, name, labels: labels ?? {} });
}

/** A Stage that left the watch of selector `from`: the stages that watched it with that selector (its labels may have changed). */
function selectedBefore(stage: StageConfig, fact: KargoStageFact, from: string): boolean {
  const selection = stage.kargo?.selection;
  if (!selection || stage.cluster !== fact.target.cluster || selection.project !== fact.target.namespace) return false;
  return (selection.labels?.text ?? '') === from && (selection.name?.matches(fact.target.name) ?? true);
}

/**
 * Whether a pipeline stage follows what this Kargo fact is about: a Stage (or a Promotion's Stage)
 * it selects, a Stage that left its selection, a Freight of its project.
 */
function stageFollowsKargoFact(stage: StageConfig, fact: KargoFact): boolean {
  if (fact.kind === 'kargo-freight') return stage.kargo !== undefined && stage.cluster === fact.cluster && stage.kargo.project === fact.namespace;
  if (fact.kind === 'kargo-stage' && fact.removed) return selectedBefore(stage, fact, fact.removed.from);
  const labels = fact.kind === 'kargo-stage' ? fact.stage.labels : fact.stageLabels;
  return stageSelectsKargoStage(stage, fact.target.cluster, fact.target.namespace, fact.target.name, labels);
}

function routeStage(config: ConfigFile, fact: KargoStageFact): Route[] {
  const routes: Route[] = [];
  for (const pipeline of config.pipelines) {
    for (const stage of pipeline.stages) {
      if (!stageFollowsKargoFact(stage, fact)) continue;
      const freight = fact.stage.freight;
      // No Freight yet: it joins (or leaves) the release in flight, as a target still to start.
      // A Stage that leaves also leaves the release in flight, where it may be pending.
      if (!freight || fact.removed) routes.push({ pipeline, stage, releaseId: '', idSource: 'in-flight' });
      if (!freight) continue;
      const id = kargoReleaseId(pipeline, freight);
      if (id) routes.push({ pipeline, stage, ...id });
    }
  }
  return routes;
}

export function routeKargo(config: ConfigFile, fact: KargoFact): Route[] {
  if (fact.kind === 'kargo-stage') return routeStage(config, fact);
  const routes: Route[] = [];
  for (const pipeline of config.pipelines) {
    for (const stage of pipeline.stages) {
      if (!fact.freight || !stageFollowsKargoFact(stage, fact)) continue;
      const id = kargoReleaseId(pipeline, fact.freight);
      if (id) routes.push({ pipeline, stage, ...id });
      // A Freight belongs to the pipeline, not to a stage of it: one route per pipeline.
      if (fact.kind === 'kargo-freight') break;
    }
  }
  return routes;
}

/** Whether any pipeline stage follows what this Kargo fact is about (the watch queues only those). */
export function kargoFactFollowed(config: ConfigFile, fact: KargoFact): boolean {
  return config.pipelines.some((pipeline) => pipeline.stages.some((stage) => stageFollowsKargoFact(stage, fact)));
}
