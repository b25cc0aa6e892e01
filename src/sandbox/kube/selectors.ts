/** Label and field selectors as the list and watch endpoints accept them. */
import { matchesLabels, parseLabelSelector, LabelSelectorError, type LabelSelector } from '../../kube/label-selector.js';
import { badRequest } from './errors.js';
import type { KubeObject } from './object.js';

export interface FieldRequirement {
  field: 'metadata.name' | 'metadata.namespace';
  equals: boolean;
  value: string;
}

export function parseLabels(selector: string | undefined): LabelSelector | undefined {
  if (!selector) return undefined;
  try {
    return parseLabelSelector(selector, { allowEmptyValues: true });
  } catch (err) {
    if (err instanceof LabelSelectorError) throw badRequest(`unable to parse requirement: ${err.reason}`);
    throw err;
  }
}

export function parseFields(selector: string | undefined): FieldRequirement[] {
  if (!selector) return [];
  return selector
    .split(',')
    .filter((t) => t.trim() !== '')
    .map((term) => {
      const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
      if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
      const [, field, op, value] = m as unknown as [string, string, string, string];
      if (field !== 'metadata.name' && field !== 'metadata.namespace') {
        throw badRequest(`field label not supported: ${field}`);
      }
      return { field, equals: op !== '!=', value };
    });
}

export function matchesSelectors(obj: KubeObject, labels: LabelSelector | undefined, fields: FieldRequirement[]): boolean {
  if (labels && !matchesLabels(labels, obj.metadata.labels)) return false;
  return fields.every((f) => {
    const actual = f.field === 'metadata.name' ? obj.metadata.name : (obj.metadata.namespace ?? '');
    return (actual === f.value) === f.equals;
  });
}
