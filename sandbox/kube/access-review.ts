/** SelfSubjectAccessReview: `kubectl auth can-i` and clients that check before they act, answered from the sandbox RBAC. */
import type { Authorizer } from './auth.js';

export interface SelfSubjectAccessReview {
  spec?: { resourceAttributes?: { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string } };
}

/** `kubectl auth can-i` and clients that check before they act. */
export function answerAccessReview(authorizer: Authorizer, user: string, review: SelfSubjectAccessReview): unknown {
  const a = review.spec?.resourceAttributes ?? {};
  const allowed = authorizer.can({
    user,
    verb: a.verb ?? '',
    group: a.group ?? '',
    resource: a.resource ?? '',
    ...(a.subresource ? { subresource: a.subresource } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    ...(a.name ? { name: a.name } : {}),
  });
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: {},
    spec: review.spec ?? {},
    status: { allowed, ...(allowed ? { reason: 'allowed by sandbox RBAC' } : {}) },
  };
}
