import { describe, expect, it } from 'vitest';
import type { StatusCause } from '../../sandbox/kube/errors.js';
import { compileSchema, UNKNOWN_FIELD, type JsonSchema } from '../../sandbox/kube/schema.js';
import { ResourceRegistry } from '../../sandbox/kube/resources.js';

const schema: JsonSchema = {
  type: 'object',
  required: ['spec'],
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[a-z]+$', maxLength: 5 },
        mode: { type: 'string', enum: ['Fast', 'Slow'] },
        replicas: { type: 'integer', minimum: 0 },
        interval: { type: 'string', default: '5m0s' },
        port: { 'x-kubernetes-int-or-string': true },
        note: { type: 'string', nullable: true },
        list: { type: 'array', minItems: 1, items: { type: 'object', properties: { v: { type: 'number' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

function run(value: unknown): { out: any; causes: StatusCause[] } {
  const causes: StatusCause[] = [];
  const out = compileSchema(schema)(value, '', causes);
  return { out, causes };
}

describe('CRD schema validation', () => {
  it('reports violations with field paths like the API server', () => {
    const { causes } = run({ spec: { name: 'Toolong', mode: 'Medium', replicas: -1, port: true, list: [], labels: { a: 1 } } });
    const byField = Object.fromEntries(causes.filter((c) => c.reason !== UNKNOWN_FIELD).map((c) => [c.field, c.message]));
    expect(byField['spec.name']).toBe('Too long: may not be more than 5 bytes');
    expect(byField['spec.mode']).toBe('Unsupported value: "Medium": supported values: "Fast", "Slow"');
    expect(byField['spec.replicas']).toBe('Invalid value: -1: spec.replicas in body should be greater than or equal to 0');
    expect(byField['spec.port']).toContain('integer-or-string');
    expect(byField['spec.list']).toBe('Invalid value: 0: spec.list in body should have at least 1 items');
    expect(byField['spec.labels.a']).toBe('Invalid value: "integer": spec.labels.a in body must be of type string: "integer"');
    expect(run({}).causes).toEqual([{ reason: 'FieldValueRequired', field: 'spec', message: 'Required value' }]);
    expect(run({ spec: { name: 'ab', list: [{ v: 'x' }] } }).causes[0]?.field).toBe('spec.list[0].v');
  });

  it('prunes unknown fields (reporting them), drops nulls of non-nullable fields, keeps preserved subtrees, applies defaults', () => {
    const { out, causes } = run({ spec: { name: 'ab', extra: 1, mode: null, note: null, port: '8080', config: { anything: { goes: true } } } });
    expect(out).toEqual({ spec: { name: 'ab', note: null, port: '8080', config: { anything: { goes: true } }, interval: '5m0s' } });
    expect(causes).toEqual([{ reason: UNKNOWN_FIELD, field: 'spec.extra', message: 'unknown field' }]);
  });

  it('reads every shipped CRD, with the subresources the real definitions declare', () => {
    const registry = new ResourceRegistry();
    const sub = (kind: string) => {
      const t = registry.byKind(kind);
      return `${t.hasStatus ? 'status' : '-'}/${t.scale ? 'scale' : '-'}/${t.namespaced ? 'Namespaced' : 'Cluster'}`;
    };
    expect(sub('Rollout')).toBe('status/scale/Namespaced');
    expect(sub('AnalysisRun')).toBe('-/-/Namespaced');
    expect(sub('Application')).toBe('-/-/Namespaced');
    expect(sub('ApplicationSet')).toBe('status/-/Namespaced');
    for (const k of ['Stage', 'Promotion', 'Freight', 'Warehouse']) expect(sub(k)).toBe('status/-/Namespaced');
    expect(registry.byKind('Promotion').shortNames).toEqual(expect.arrayContaining(['promo', 'promos']));
  });
});
