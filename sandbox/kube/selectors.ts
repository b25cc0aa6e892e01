/** Label and field selectors as the list and watch endpoints accept them. */
import { badRequest } from './errors.js';
import { parseSelector, selectorMatches, SelectorSyntaxError, type ParsedSelector } from './label-selector.js';
import type { KubeObject } from './object.js';

export interface FieldRequirement {
  field: string;
  equals: boolean;
  value: string;
}

const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];

/** Extra field labels the API server supports per resource (`kubectl describe` selects events by involvedObject). */
export const EXTRA_FIELDS: Record<string, string[]> = {
  '/events': [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
};

export function parseLabels(selector: string | undefined): ParsedSelector | undefined {
  if (!selector) return undefined;
  try {
    return parseSelector(selector);
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badRequest(`unable to parse requirement: ${err.message}`);
    throw err;
  }
}

export function parseFields(selector: string | undefined, extraFields: string[] = []): FieldRequirement[] {
  if (!selector) return [];
  return selector
    .split(',')
    .filter((t) => t.trim() !== '')
    .map((term) => {
      const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
      if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
      const [, field, op, value] = m as unknown as [string, string, string, string];
      if (!COMMON_FIELDS.includes(field) && !extraFields.includes(field)) throw badRequest(`field label not supported: ${field}`);
      return { field, equals: op !== '!=', value };
    });
}

export function matchesSelectors(obj: KubeObject, labels: ParsedSelector | undefined, fields: FieldRequirement[]): boolean {
  if (labels && !selectorMatches(labels, obj.metadata.labels)) return false;
  return fields.every((f) => {
    let actual: unknown = obj;
    for (const key of f.field.split('.')) actual = actual && typeof actual === 'object' ? (actual as Record<string, unknown>)[key] : undefined;
    if (f.field === 'source' && actual && typeof actual === 'object') actual = (actual as { component?: string }).component;
    return (String(actual ?? '') === f.value) === f.equals;
  });
}
