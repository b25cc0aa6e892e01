/**
 * What a template's generator selects, pure: whether an object is one of the generator's, the
 * group it falls in, and the watch scopes that list the generator's objects.
 */
import type { PipelineTemplate } from '../config/file.js';
import type { TemplateBindings } from '../config/templates.js';
import { fillText } from '../config/templates.js';

/** An object a generator may list: a Rollout or an Argo CD Application, as a fact carries it. */
export interface GeneratedFrom {
  kind: 'Rollout' | 'Application';
  cluster: string;
  namespace: string;
  name: string;
  /** When known: a deleted object's late facts (no newer than its deletion) do not bring its group back. */
  uid?: string;
  resourceVersion?: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

/** The key of an object among a group's members (sorted keys pick the group's first object). */
export function memberKey(o: Pick<GeneratedFrom, 'kind' | 'cluster' | 'namespace' | 'name'>): string {
  return `${o.cluster}/${o.namespace}/${o.kind}/${o.name}`;
}

/** The group's placeholders from one of its objects, or undefined when the generator does not select it. */
export function bindingsOf(t: PipelineTemplate, o: GeneratedFrom): TemplateBindings | undefined {
  const g = t.generator;
  if (!g.clusters.includes(o.cluster)) return undefined;
  const sel = o.kind === 'Rollout' ? g.rollouts : g.applications;
  if (!sel || !sel.namespaces.includes(o.namespace) || !sel.selector.matches(o.labels)) return undefined;
  const value = o.labels[g.groupBy.label];
  if (value === undefined || value === '') return undefined;
  return { value, namespace: o.namespace, cluster: o.cluster, labels: o.labels, annotations: o.annotations };
}

/** The name of the pipeline an object's group generates (the group's identity: the template decides how fine groups are). */
export function generatedName(t: PipelineTemplate, b: TemplateBindings): string {
  return fillText(t.name, b);
}

export interface GeneratorScope {
  kind: 'Rollout' | 'Application';
  namespace: string;
  labelSelector: string;
}

/** What the watch of `cluster` lists for the templates' generators. */
export function generatorScopes(templates: readonly PipelineTemplate[], cluster: string): GeneratorScope[] {
  const scopes: GeneratorScope[] = [];
  for (const t of templates) {
    const g = t.generator;
    if (!g.clusters.includes(cluster)) continue;
    for (const namespace of g.rollouts?.namespaces ?? []) scopes.push({ kind: 'Rollout', namespace, labelSelector: g.rollouts!.selector.text });
    for (const namespace of g.applications?.namespaces ?? []) scopes.push({ kind: 'Application', namespace, labelSelector: g.applications!.selector.text });
  }
  return scopes;
}
