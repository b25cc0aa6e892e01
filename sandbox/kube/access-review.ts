/**
 * SelfSubjectAccessReview (`kubectl auth can-i`) and SubjectAccessReview (may this user and these
 * groups…?, asked by a caller allowed to create them), answered from the sandbox RBAC.
 */
import type { Authorizer } from './auth.js';
import type { RequestSubject } from './impersonation.js';

type ResourceAttributes = { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string };

export interface SelfSubjectAccessReview {
  spec?: { resourceAttributes?: ResourceAttributes };
}

export interface SubjectAccessReview {
  spec?: { user?: string; groups?: string[]; resourceAttributes?: ResourceAttributes };
}

function decide(authorizer: Authorizer, subject: Pick<RequestSubject, 'user' | 'groups'>, a: ResourceAttributes): { allowed: boolean; reason?: string } {
  const allowed = authorizer.can({
    user: subject.user,
    groups: subject.groups,
    verb: a.verb ?? '',
    group: a.group ?? '',
    resource: a.resource ?? '',
    ...(a.subresource ? { subresource: a.subresource } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    ...(a.name ? { name: a.name } : {}),
  });
  return allowed ? { allowed, reason: 'allowed by sandbox RBAC' } : { allowed };
}

/** `kubectl auth can-i` and clients that check before they act: answered for whoever the request is served as. */
export function answerAccessReview(authorizer: Authorizer, subject: Pick<RequestSubject, 'user' | 'groups'>, review: SelfSubjectAccessReview): unknown {
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: review.spec ?? {}, status: decide(authorizer, subject, review.spec?.resourceAttributes ?? {}) };
}

/** The review of someone else's access: the spec's user and groups, never the caller's. */
export function answerSubjectAccessReview(authorizer: Authorizer, review: SubjectAccessReview): unknown {
  const spec = review.spec ?? {};
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec,
    status: decide(authorizer, { user: spec.user ?? '', groups: spec.groups ?? [] }, spec.resourceAttributes ?? {}),
  };
}
