/**
 * Kubernetes `Status` errors, shaped like the real API server's so clients (client-node, kubectl)
 * show the same messages and status codes to the user.
 */

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): KubeStatus {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `rollouts.argoproj.io` for a group resource, `namespaces` for the core group. */
export function groupResource(plural: string, group: string): string {
  return group === '' ? plural : `${plural}.${group}`;
}

export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${groupResource(plural, group)} "${name}" not found`, { name, group, kind: plural });
}

export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${groupResource(plural, group)} "${name}" already exists`, {
    name,
    group,
    kind: plural,
  });
}

export function conflict(plural: string, group: string, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${groupResource(plural, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group, kind: plural },
  );
}

export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const listed = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const body = listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${group === '' ? kind : `${kind}.${group}`} "${name}" is invalid: ${body}`, {
    name,
    group,
    kind,
    causes,
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function forbidden(
  user: string,
  verb: string,
  resource: string,
  group: string,
  namespace: string | undefined,
  name?: string,
): ApiError {
  const [plural, sub] = resource.split('/') as [string, string | undefined];
  const base = groupResource(plural, group);
  const what = name ? `${base} "${name}"` : sub ? `${base}/${sub}` : base;
  const scope = namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
  return new ApiError(
    403,
    'Forbidden',
    `${what} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}"${scope}`,
    { ...(name ? { name } : {}), group, kind: plural },
  );
}
