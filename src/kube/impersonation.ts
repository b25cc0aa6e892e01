/**
 * Acting as the person (docs/actions.md): the Kubernetes identity a write is sent as, and the
 * access a write needs, in the attributes a SubjectAccessReview asks about.
 */
import type { Dispatcher } from 'undici';

/** A Kubernetes user and its groups, sent as Impersonate-User and one Impersonate-Group line per group. */
export interface KubeIdentity {
  user: string;
  groups: readonly string[];
}

/** One permission a write needs, as authorization.k8s.io/v1 resourceAttributes. */
export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace: string;
  name?: string;
}

/** `patch rollouts/status in shop on prod`: the words of a refusal (the object itself is named by the attempt). */
export function describeAccess(access: AccessAttributes, cluster: string): string {
  const resource = access.subresource ? `${access.resource}/${access.subresource}` : access.resource;
  return `${access.verb} ${resource} in ${access.namespace} on ${cluster}`;
}

/**
 * A dispatcher that adds the impersonation headers to every request it carries. Through fetch a
 * header has one value (repeated values are joined with ", "), and the API server takes every
 * Impersonate-Group line as one group name, commas included: so the lines are added here, below
 * fetch, one per group.
 */
export function impersonating(dispatcher: Dispatcher, identity: KubeIdentity): Dispatcher {
  const lines = ['Impersonate-User', identity.user, ...identity.groups.flatMap((group) => ['Impersonate-Group', group])];
  return dispatcher.compose((dispatch) => (options, handler) => {
    const flat: string[] = [];
    const headers = options.headers;
    if (Array.isArray(headers)) flat.push(...(headers as string[]));
    else if (headers && typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') for (const [k, v] of headers as Iterable<[string, string]>) flat.push(k, v);
    else for (const [k, v] of Object.entries((headers ?? {}) as Record<string, string | string[] | undefined>)) for (const value of [v ?? []].flat()) flat.push(k, value);
    // Never forwarded from anywhere else: only the identity this dispatcher was made for.
    const kept: string[] = [];
    for (let i = 0; i < flat.length; i += 2) if (!/^impersonate-/i.test(flat[i]!)) kept.push(flat[i]!, flat[i + 1]!);
    return dispatch({ ...options, headers: [...kept, ...lines] }, handler);
  });
}
