/**
 * What the API server sends is checked against what was asked for. The selectors of a scope are
 * sent to the API server so that it filters, but a server that ignores them (a broken proxy, an
 * aggregated API, a hostile stand-in: issue 20) must not turn 50,000 objects we did not select
 * into 50,000 facts: every listed and watched object is matched again here, with the product's
 * own selector matcher, before it can become a fact.
 */
import { compileLabelSelector } from '../../model/label-selector.js';

/** Why an object the API server sent is not the scope's. */
export type RefusalReason = 'outside_selector' | 'outside_field_selector' | 'outside_namespace';

export interface FilteredScope {
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
}

interface FieldTerm {
  field: 'metadata.name' | 'metadata.namespace';
  equal: boolean;
  value: string;
}

/**
 * The `metadata.name` / `metadata.namespace` terms of a field selector (`=`, `==`, `!=`). Other
 * fields are left to the API server: refusing what we cannot judge would drop good objects.
 */
function fieldTerms(selector: string | undefined): FieldTerm[] {
  const terms: FieldTerm[] = [];
  for (const raw of (selector ?? '').split(',')) {
    const match = /^\s*(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (match) terms.push({ field: match[1] as FieldTerm['field'], equal: match[2] !== '!=', value: match[3]! });
  }
  return terms;
}

function metadataOf(object: unknown): { name?: unknown; namespace?: unknown; labels?: unknown } {
  const meta = (object as { metadata?: unknown } | null)?.metadata;
  return typeof meta === 'object' && meta !== null ? (meta as { name?: unknown; namespace?: unknown; labels?: unknown }) : {};
}

/** Labels as a plain record, or none (a non-object `labels` is no labels, so a selector requiring one refuses it). */
function labelsOf(meta: { labels?: unknown }): Record<string, string> | undefined {
  const labels = meta.labels;
  return typeof labels === 'object' && labels !== null && !Array.isArray(labels) ? (labels as Record<string, string>) : undefined;
}

/**
 * A matcher for one scope, compiled once: undefined when the object is the scope's, else why not.
 * The selector text was validated when the config was loaded; `key=` (empty value) is what
 * Kubernetes accepts, so it is accepted here too.
 */
export function scopeFilter(scope: FilteredScope): (object: unknown) => RefusalReason | undefined {
  const labels = scope.labelSelector ? compileLabelSelector(scope.labelSelector, { allowEmptyValues: true }) : undefined;
  const fields = fieldTerms(scope.fieldSelector);
  return (object) => {
    const meta = metadataOf(object);
    if (meta.namespace !== scope.namespace) return 'outside_namespace';
    for (const term of fields) {
      const actual = term.field === 'metadata.name' ? meta.name : meta.namespace;
      if ((actual === term.value) !== term.equal) return 'outside_field_selector';
    }
    if (labels && !labels.matches(labelsOf(meta))) return 'outside_selector';
    return undefined;
  };
}
