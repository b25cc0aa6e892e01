/**
 * `meta.k8s.io/v1` Table responses, which `kubectl get` asks for: the CRD's printer columns, with
 * Name first as the real API server does.
 */
import type { KubeObject } from './object.js';
import { evaluateJsonPath } from './jsonpath.js';
import type { ResourceType } from './resources.js';

export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').includes('as=Table');
}

function age(created: string | undefined, now: number): string {
  if (!created) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(created)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function cell(rt: ResourceType, obj: KubeObject, jsonPath: string, type: string, now: number): unknown {
  const v = evaluateJsonPath(obj, jsonPath);
  if (type === 'date') return age(typeof v === 'string' ? v : undefined, now);
  if (v === undefined) return null;
  void rt;
  return typeof v === 'object' ? JSON.stringify(v) : v;
}

function columns(rt: ResourceType): { name: string; type: string; jsonPath: string; description: string; priority: number }[] {
  const defined = rt.printerColumns.length > 0 ? rt.printerColumns : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  const withAge = defined.some((c) => c.jsonPath === '.metadata.creationTimestamp')
    ? defined
    : [...defined, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return [
    { name: 'Name', type: 'string', jsonPath: '.metadata.name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...withAge.map((c) => ({ name: c.name, type: c.type, jsonPath: c.jsonPath, description: c.description ?? '', priority: c.priority ?? 0 })),
  ];
}

export function toTable(rt: ResourceType, objects: KubeObject[], resourceVersion: string, now: number, continueToken?: string): unknown {
  const cols = columns(rt);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion, ...(continueToken ? { continue: continueToken } : {}) },
    columnDefinitions: cols.map((c) => ({ name: c.name, type: c.type === 'date' ? 'date' : c.type, format: c.name === 'Name' ? 'name' : '', description: c.description, priority: c.priority })),
    rows: objects.map((o) => ({
      cells: cols.map((c) => cell(rt, o, c.jsonPath, c.type, now)),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
