/** The discovery documents kubectl and client-node read before touching a resource. */
import type { ResourceRegistry, ResourceType } from './resources.js';

const BASE_VERBS = ['delete', 'get', 'list', 'patch', 'create', 'update', 'watch'];

export const VERSION_INFO = {
  major: '1',
  minor: '34',
  gitVersion: 'v1.34.0-glidepath-sandbox',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-08-01T00:00:00Z',
  goVersion: 'go1.24.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function entries(types: ResourceType[]): unknown[] {
  return types.flatMap((t) => {
    const main = {
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.plural === 'events' ? BASE_VERBS : BASE_VERBS,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length ? { categories: t.categories } : {}),
    };
    const subs: unknown[] = [];
    if (t.hasStatus) subs.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    if (t.scale) {
      subs.push({ name: `${t.plural}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    }
    return [main, ...subs];
  });
}

export function coreResourceList(registry: ResourceRegistry): unknown {
  return { kind: 'APIResourceList', groupVersion: 'v1', resources: entries(registry.types.filter((t) => t.group === '')) };
}

export function groupResourceList(registry: ResourceRegistry, group: string, version: string): unknown | undefined {
  const types = registry.types.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: entries(types) };
}

function groupDoc(name: string, versions: string[]): unknown {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

/** Served by the server itself (self-subject access reviews), not by a CRD. */
const AUTHORIZATION = { name: 'authorization.k8s.io', versions: ['v1'] };

export const AUTHORIZATION_RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'authorization.k8s.io/v1',
  resources: [{ name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] }],
};

export function groupList(registry: ResourceRegistry): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...registry.groups(), AUTHORIZATION].map((g) => groupDoc(g.name, g.versions)) };
}

export function group(registry: ResourceRegistry, name: string): unknown | undefined {
  const g = [...registry.groups(), AUTHORIZATION].find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...(groupDoc(g.name, g.versions) as object) } : undefined;
}

export function coreVersions(serverAddress: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}
