/**
 * What the watch source lists and watches in each cluster: exactly what some pipeline selects,
 * with the selector sent to the API server, so the API server filters and we hold no objects we
 * do not track. Rollout stages also bring the Argo CD Applications of the cluster that carry the
 * tracking label (the same objects the Argo CD notification subscription selects). ApplicationSet
 * stages bring each ApplicationSet they name (by name: a field selector) and its children. Kargo
 * stages bring their project's Stages (by the selection's labels), Promotions and Freight.
 * Templates bring what their generators list (never the pipelines they generate: a generated
 * pipeline's stages select within its generator's objects, which the generator's scope lists).
 */
import type { ConfigFile } from '../../config/file.js';
import { explicitPipelines } from '../../routing/catalog.js';
import { generatorScopes } from '../../routing/generator.js';
import { APPLICATION_SETS, APPLICATIONS, FREIGHT, PROMOTIONS, ROLLOUTS, STAGES, type ResourceRef } from '../../kube/resources.js';

export interface WatchScope {
  resource: ResourceRef;
  namespace: string;
  labelSelector?: string;
  /** Sent to the API server too: `metadata.name=<name>` selects one ApplicationSet. */
  fieldSelector?: string;
  /**
   * Applications only: keep those whose controller owner is one of these ApplicationSets (the
   * controller finds its children by ownerReference, which no selector can express), sorted.
   */
  ownedBy?: string[];
}


export function watchedClusters(config: ConfigFile): string[] {
  return config.clusters.filter((c) => (c.facts ?? 'webhook') !== 'webhook').map((c) => c.name);
}

/** Whether a scope is one a template's generator lists: its objects' deletions retire their groups. */
export function isGeneratorScope(config: ConfigFile, cluster: string, scope: WatchScope): boolean {
  return generatorScopes(config.pipelineTemplates, cluster).some((g) => g.namespace === scope.namespace && g.labelSelector === scope.labelSelector && (g.kind === 'Rollout' ? ROLLOUTS : APPLICATIONS) === scope.resource && scope.fieldSelector === undefined && scope.ownedBy === undefined);
}

export function watchScopes(config: ConfigFile, cluster: string): WatchScope[] {
  const scopes = new Map<string, WatchScope>();
  const add = (scope: WatchScope): void => void scopes.set(`${scope.resource.plural}|${scope.namespace}|${scope.labelSelector ?? ''}|${scope.fieldSelector ?? ''}|${scope.ownedBy?.join(',') ?? ''}`, scope);
  const clusterConfig = config.clusters.find((c) => c.name === cluster);
  let anyRollouts = false;
  /** ApplicationSets named by stages, per namespace. */
  const appSets = new Map<string, Set<string>>();
  for (const g of generatorScopes(config.pipelineTemplates, cluster)) {
    if (g.kind === 'Rollout') anyRollouts = true;
    add({ resource: g.kind === 'Rollout' ? ROLLOUTS : APPLICATIONS, namespace: g.namespace, labelSelector: g.labelSelector });
  }
  for (const pipeline of explicitPipelines(config)) {
    for (const stage of pipeline.stages) {
      if (stage.cluster !== cluster) continue;
      if (stage.rollouts) {
        anyRollouts = true;
        add({ resource: ROLLOUTS, namespace: stage.rollouts.namespace, labelSelector: stage.rollouts.selector.text });
      }
      if (stage.kargo) {
        // Stages with the label part of the selection (name patterns are matched as they arrive);
        // the project's Promotions and Freight (a Promotion carries only its Stage's name).
        const { project, labels } = stage.kargo.selection;
        add({ resource: STAGES, namespace: project, ...(labels ? { labelSelector: labels.text } : {}) });
        add({ resource: PROMOTIONS, namespace: project });
        add({ resource: FREIGHT, namespace: project });
      }
      if (stage.applications) add({ resource: APPLICATIONS, namespace: stage.applications.namespace, labelSelector: stage.applications.selector.text });
      if (stage.applicationSet) {
        const names = appSets.get(stage.applicationSet.namespace) ?? new Set<string>();
        appSets.set(stage.applicationSet.namespace, names.add(stage.applicationSet.name));
      }
    }
  }
  for (const [namespace, names] of appSets) {
    // Each ApplicationSet by name (its step progress), and its children (their sync and health).
    for (const name of names) add({ resource: APPLICATION_SETS, namespace, fieldSelector: `metadata.name=${name}` });
    add({ resource: APPLICATIONS, namespace, ownedBy: [...names].sort() });
  }
  if (anyRollouts) {
    for (const namespace of clusterConfig?.argocdNamespaces ?? ['argocd']) {
      add({ resource: APPLICATIONS, namespace, labelSelector: config.settings.watchApplicationSelector.text });
    }
  }
  return [...scopes.values()];
}
