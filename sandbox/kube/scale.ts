/** The scale subresource of CRDs that declare one (`kubectl scale rollout`): an autoscaling/v1 Scale view of the object. */
import type { ServerResponse } from 'node:http';
import { ApiError, notFound } from './errors.js';
import { send, type ResourcePath } from './http-io.js';
import type { KubeObject } from './object.js';
import { mergePatch } from './patch.js';
import type { ObjectStore } from './store.js';

/** Reads and writes `.spec.replicas`-style paths of the scale subresource. */
function pathGet(obj: unknown, path: string): unknown {
  return path
    .split('.')
    .filter(Boolean)
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), obj);
}

function pathSet(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.').filter(Boolean);
  let node = obj;
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/** GET, PUT or merge-PATCH `<resource>/scale`; only spec.replicas can change. */
export function serveScale(store: ObjectStore, method: string, path: ResourcePath, parse: () => unknown, user: string, res: ServerResponse): void {
  const { rt, namespace, name } = path;
  const scale = rt.scale!;
  if (!name) throw notFound(rt.plural, rt.group, '');
  const toScale = (obj: KubeObject): Record<string, unknown> => ({
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, creationTimestamp: obj.metadata.creationTimestamp },
    spec: { replicas: pathGet(obj, scale.specReplicasPath) ?? 0 },
    status: { replicas: pathGet(obj, scale.statusReplicasPath) ?? 0, selector: scale.labelSelectorPath ? (pathGet(obj, scale.labelSelectorPath) ?? '') : '' },
  });
  const current = store.get(rt, namespace, name);
  if (method === 'GET') return send(res, 200, toScale(current));
  let desired: Record<string, unknown>;
  if (method === 'PUT') desired = parse() as Record<string, unknown>;
  else if (method === 'PATCH') {
    desired = mergePatch(toScale(current), parse()) as Record<string, unknown>;
  } else throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const replicas = (desired.spec as { replicas?: unknown } | undefined)?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw new ApiError(422, 'Invalid', `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
  }
  const rv = (desired.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
  const updated = store.mutate(rt, namespace, name, (obj) => {
    if (rv) obj.metadata.resourceVersion = rv;
    pathSet(obj as unknown as Record<string, unknown>, scale.specReplicasPath, replicas);
  }, { user });
  send(res, 200, toScale(updated));
}
