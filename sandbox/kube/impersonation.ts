/**
 * Impersonation as the API server does it (k8s.io/apiserver's WithImpersonation filter): a
 * request with `Impersonate-User` and any number of `Impersonate-Group` lines is served as that
 * user and those groups, once the authenticated caller may `impersonate` each of them (users and
 * groups in the core group, by name). Groups without a user are refused, as there.
 */
import type { IncomingMessage } from 'node:http';
import type { Authorizer } from './auth.js';
import { ApiError, forbidden } from './errors.js';

/** Who a request is served as: its caller, or the identity the caller impersonates. */
export interface RequestSubject {
  user: string;
  groups: string[];
  /** The authenticated caller, when it impersonates someone. */
  impersonatedBy?: string;
}

/** Every line of a header (Node keeps repeated lines apart in headersDistinct), never split on commas. */
function lines(req: IncomingMessage, header: string): string[] {
  return req.headersDistinct[header] ?? [];
}

export function subjectOf(authorizer: Authorizer, caller: string, req: IncomingMessage): RequestSubject {
  const [user, ...extraUsers] = lines(req, 'impersonate-user');
  const groups = lines(req, 'impersonate-group');
  if (user === undefined) {
    if (groups.length > 0) throw new ApiError(403, 'Forbidden', `requested [${groups.map((g) => `{Group  ${g}}`).join(' ')}] without impersonating a user`);
    return { user: caller, groups: [] };
  }
  if (extraUsers.length > 0) throw new ApiError(400, 'BadRequest', 'only one Impersonate-User header may be sent');
  if (!authorizer.can({ user: caller, verb: 'impersonate', group: '', resource: 'users', name: user })) throw forbidden(caller, 'impersonate', 'users', '', undefined, user);
  for (const group of groups) {
    if (!authorizer.can({ user: caller, verb: 'impersonate', group: '', resource: 'groups', name: group })) throw forbidden(caller, 'impersonate', 'groups', '', undefined, group);
  }
  return { user, groups, impersonatedBy: caller };
}
