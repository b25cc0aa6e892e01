/**
 * The /openapi/v3 documents kubectl reads before `create` and `apply`: with them it leaves field
 * validation to the server (`?fieldValidation=Strict`) instead of refusing to run. Paths carry the
 * group-version-kind and the fieldValidation parameter; schemas are the CRDs' own.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from './resources.js';

const WRITE_PARAMS = [
  { name: 'dryRun', in: 'query', schema: { type: 'string' } },
  { name: 'fieldManager', in: 'query', schema: { type: 'string' } },
  { name: 'fieldValidation', in: 'query', schema: { type: 'string' } },
];

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function schemaName(rt: ResourceType): string {
  const domain = rt.group === '' ? 'io.k8s.api.core' : rt.group.split('.').reverse().join('.');
  return `${domain}.${rt.version}.${rt.kind}`;
}

function paths(rt: ResourceType): Record<string, unknown> {
  const base = `/${gvPath(rt.group, rt.version)}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}`;
  const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
  const op = (action: string, params: unknown[] = []) => ({
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    parameters: params,
    responses: { '200': { description: 'OK' } },
  });
  const out: Record<string, unknown> = {
    [base]: { get: op('list'), post: op('post', WRITE_PARAMS) },
    [`${base}/{name}`]: { get: op('get'), put: op('put', WRITE_PARAMS), patch: op('patch', WRITE_PARAMS), delete: op('delete') },
  };
  if (rt.hasStatus) out[`${base}/{name}/status`] = { get: op('get'), put: op('put', WRITE_PARAMS), patch: op('patch', WRITE_PARAMS) };
  return out;
}

export class OpenApiDocuments {
  private readonly cache = new Map<string, string>();

  constructor(private readonly registry: ResourceRegistry) {}

  private groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.registry.types) seen.set(gvPath(t.group, t.version), { group: t.group, version: t.version });
    return [...seen.values()];
  }

  root(): unknown {
    return {
      paths: Object.fromEntries(
        this.groupVersions().map(({ group, version }) => {
          const hash = createHash('sha256').update(this.document(group, version) ?? '').digest('hex').slice(0, 32).toUpperCase();
          return [gvPath(group, version), { serverRelativeURL: `/openapi/v3/${gvPath(group, version)}?hash=${hash}` }];
        }),
      ),
    };
  }

  /** The document of one group version, as JSON text (cached: the ApplicationSet schema alone is 1.4 MB). */
  document(group: string, version: string): string | undefined {
    const key = gvPath(group, version);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const types = this.registry.types.filter((t) => t.group === group && t.version === version);
    if (types.length === 0) return undefined;
    const doc = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'v1.34.0' },
      paths: Object.assign({}, ...types.map(paths)),
      components: {
        schemas: Object.fromEntries(
          types.map((t) => [schemaName(t), { type: 'object', ...(t.schema ?? {}), 'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }] }]),
        ),
      },
    };
    const text = JSON.stringify(doc);
    this.cache.set(key, text);
    return text;
  }
}
