/**
 * Which pipeline stages a fact belongs to, and under which release id. Stages select their
 * targets by cluster, namespace and label selector, so targets can come and go freely.
 */
import { createHash } from 'node:crypto';
import type { ConfigFile, PipelineConfig, StageConfig } from '../config/file.js';
import type { ApplicationFact, ClusterFact, RolloutFact } from '../facts/fact.js';
import { releaseIdSchema } from '../facts/schemas.js';
import { cutCodePoints } from '../model/unicode.js';
import type { Route } from './route-types.js';
import { REVISION_RELEASE_PREFIX } from '../releases/record/release-ids.js';
import { routeKargo } from './route-kargo.js';
import { routablePipelines } from './catalog.js';

/** With no release id annotation, the sorted image refs are the release's identity. */
export function imagesReleaseId(images: readonly string[]): string {
  return `images-${createHash('sha256').update([...images].sort().join('\n')).digest('hex').slice(0, 12)}`;
}

/** With no release id annotation, an Application's release is the revision it was compared against. */
export function revisionReleaseId(revision: string): string {
  return `${REVISION_RELEASE_PREFIX}${cutCodePoints(revision, 12)}`;
}

function releaseIdOf(
  pipeline: PipelineConfig,
  annotations: Record<string, string>,
  fallback: () => string | undefined,
): { releaseId: string; idSource: 'annotation' | 'images' } | undefined {
  const annotated = annotations[pipeline.releaseIdAnnotation];
  if (annotated !== undefined && releaseIdSchema.safeParse(annotated).success) return { releaseId: annotated, idSource: 'annotation' };
  const id = fallback();
  return id === undefined ? undefined : { releaseId: id, idSource: 'images' };
}

/** Whether a stage selects the Rollout `cluster/namespace` with these labels (the one rule for facts and commands). */
export function stageSelectsRollout(stage: StageConfig, cluster: string, namespace: string, labels: Readonly<Record<string, string>>): boolean {
  const sel = stage.rollouts;
  return sel !== undefined && stage.cluster === cluster && sel.namespace === namespace && sel.selector.matches(labels);
}

function routeRollout(pipelines: readonly PipelineConfig[], fact: RolloutFact): Route[] {
  const routes: Route[] = [];
  for (const pipeline of pipelines) {
    for (const stage of pipeline.stages) {
      if (!stageSelectsRollout(stage, fact.target.cluster, fact.target.namespace, fact.rollout.labels)) continue;
      const id = releaseIdOf(pipeline, fact.rollout.annotations, () =>
        fact.rollout.images.length > 0 ? imagesReleaseId(fact.rollout.images) : undefined,
      );
      if (id) routes.push({ pipeline, stage, ...id });
    }
  }
  return routes;
}

function routeApplication(pipelines: readonly PipelineConfig[], fact: ApplicationFact): Route[] {
  const routes: Route[] = [];
  const app = fact.application;
  for (const pipeline of pipelines) {
    for (const stage of pipeline.stages) {
      if (stage.cluster !== fact.target.cluster) continue;
      const byLabels = stage.applications && stage.applications.namespace === fact.target.namespace && stage.applications.selector.matches(app.labels);
      const byAppSet = stage.applicationSet && stage.applicationSet.namespace === fact.target.namespace && stage.applicationSet.name === app.appSet;
      if (!byLabels && !byAppSet) continue;
      const id = releaseIdOf(pipeline, app.annotations, () => {
        const revision = app.revisions[0];
        return revision ? revisionReleaseId(revision) : undefined;
      });
      if (id) routes.push({ pipeline, stage, ...id });
    }
  }
  return routes;
}

/**
 * Routes found from the fact alone. Application facts about Applications that manage the
 * Rollouts of a stage are routed through the store's index instead (see the reducer worker).
 */
export function routeFact(config: ConfigFile, fact: ClusterFact): Route[] {
  // A Rollout or Application of a template's generator makes its group's pipeline known before it is routed.
  if (fact.kind === 'rollout') return routeRollout(routablePipelines(config, fact), fact);
  return fact.kind === 'application' ? routeApplication(routablePipelines(config, fact), fact) : routeKargo(config, fact);
}
