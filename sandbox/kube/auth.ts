/**
 * Bearer tokens mapped to users, and RBAC rules reduced to what Glidepath's permission story needs:
 * verbs on resources and subresources (`rollouts/status`), optionally limited to namespaces and
 * names, including custom verbs such as Kargo's `promote` on `stages`.
 */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  /** `rollouts`, `rollouts/status`, `*`. */
  resources: string[];
  /** Omitted = every namespace (a ClusterRole binding). */
  namespaces?: string[];
  resourceNames?: string[];
}

export interface SandboxUser {
  name: string;
  token: string;
  rules: PolicyRule[];
}

export interface AccessRequest {
  user: string;
  /** The groups the request is made with (impersonated ones included); `system:authenticated` is implied. */
  groups?: readonly string[];
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

function allows(list: string[] | undefined, value: string): boolean {
  return list === undefined || list.includes('*') || list.includes(value);
}

export const ADMIN_RULES: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];

export class Authorizer {
  private readonly byToken = new Map<string, SandboxUser>();
  private readonly byName = new Map<string, SandboxUser>();
  /** Rules bound to subjects that have no token here: people reached only by impersonation, and groups. */
  private readonly granted = new Map<string, PolicyRule[]>();

  constructor(users: SandboxUser[]) {
    for (const u of users) this.addUser(u);
  }

  addUser(user: SandboxUser): void {
    this.byToken.set(user.token, user);
    this.byName.set(user.name, user);
  }

  /** A RoleBinding's worth: `rules` for a user or a group, whether or not it has a token. */
  grant(kind: 'User' | 'Group', name: string, rules: PolicyRule[]): void {
    const key = `${kind}:${name}`;
    this.granted.set(key, [...(this.granted.get(key) ?? []), ...rules]);
  }

  users(): SandboxUser[] {
    return [...this.byName.values()];
  }

  authenticate(authorization: string | undefined): SandboxUser | undefined {
    const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
    return m ? this.byToken.get(m[1]!.trim()) : undefined;
  }

  /** Every rule that applies to the request's user and groups, as RBAC unions its bindings. */
  private rulesOf(request: AccessRequest): PolicyRule[] {
    const groups = ['system:authenticated', ...(request.groups ?? [])];
    return [
      ...(this.byName.get(request.user)?.rules ?? []),
      ...(this.granted.get(`User:${request.user}`) ?? []),
      ...groups.flatMap((g) => this.granted.get(`Group:${g}`) ?? []),
    ];
  }

  can(request: AccessRequest): boolean {
    const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
    return this.rulesOf(request).some(
      (r) =>
        allows(r.verbs, request.verb) &&
        allows(r.apiGroups, request.group) &&
        (allows(r.resources, resource) || (request.subresource !== undefined && r.resources.includes(`${request.resource}/*`))) &&
        (r.namespaces === undefined || (request.namespace !== undefined && r.namespaces.includes(request.namespace))) &&
        (r.resourceNames === undefined || (request.name !== undefined && r.resourceNames.includes(request.name))),
    );
  }
}
