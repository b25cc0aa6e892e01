/**
 * Every failure of a call to a cluster as one typed error whose message a person in Slack can act
 * on: it names the cluster, the object and the verb, and says whether anything was changed.
 * Glidepath's own refusals to act are values, not errors (refusal.ts).
 */
import { RBAC_FILE } from './verbs.js';

export type KubeActionErrorKind =
  /** RBAC denied the call (403). */
  | 'forbidden'
  /** The credentials were not accepted (401). */
  | 'unauthorized'
  | 'not-found'
  /** The object changed between Glidepath's read and its write (409 on a resourceVersion). */
  | 'conflict'
  | 'already-exists'
  /** The API server or a webhook rejected the object (422, 400, or a webhook's 403). */
  | 'invalid'
  | 'timeout'
  | 'unreachable'
  /** 429 / 5xx. */
  | 'server'
  /** The object read back does not have the shape Glidepath understands. */
  | 'malformed'
  /** A watch stream sent a line longer than the configured cap (a broken or hostile API server). */
  | 'line-too-long'
  | 'unknown-cluster';

export interface KubeCall {
  cluster: string;
  verb: string;
  /** `rollouts`, `rollouts/status`, `applications`. */
  resource: string;
  namespace?: string;
  name?: string;
  /** The Kubernetes user a write was sent as (impersonation); undefined: Glidepath's own credentials. */
  sentAs?: string;
}

export class KubeActionError extends Error {
  override readonly name = 'KubeActionError';
  constructor(
    readonly kind: KubeActionErrorKind,
    message: string,
    readonly call?: KubeCall,
    /** HTTP status from the API server, when there was one. */
    readonly status?: number,
    /** Extra facts for the caller (e.g. the stale children behind a refusal). */
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  /** How long the API server asked us to wait before trying again (`Retry-After` on a 429 or 503). */
  readonly retryAfterMs?: number;
}

/**
 * `Retry-After` of a 429/503, in milliseconds: delta-seconds or an HTTP date (RFC 9110). client-node
 * 2.x's ApiException carries the response headers, lower-cased by fetch; anything unreadable is
 * ignored (the caller's own backoff applies).
 */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const entry = Object.entries(headers as Record<string, unknown>).find(([k]) => k.toLowerCase() === 'retry-after');
  const raw = entry?.[1];
  const value = (Array.isArray(raw) ? raw[0] : raw) as unknown;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `prod/shop` (cluster/namespace), `prod` for cluster-scoped calls. */
export function where(call: Pick<KubeCall, 'cluster' | 'namespace'>): string {
  return call.namespace ? `${call.cluster}/${call.namespace}` : call.cluster;
}

function target(call: KubeCall): string {
  return call.name ? `${call.resource} "${call.name}"` : call.resource;
}

interface StatusBody {
  message?: string;
  reason?: string;
  details?: { causes?: { field?: string; message?: string }[] };
}

function statusBody(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody;
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : undefined;
}

/** Cluster text is untrusted and may be long: one line, bounded. */
function clip(text: string | undefined, max = 300): string {
  const line = (text ?? '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The first system or undici error code in the chain (ECONNREFUSED, ENOTFOUND, UND_ERR_…). */
export function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.length > 0) return networkCode(errors[0]);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const name = (e as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'AbortError') return true;
    const code = (e as { code?: unknown }).code;
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'ETIMEDOUT') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPIPE', 'UND_ERR_SOCKET', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID']);

/**
 * Turns whatever a client-node call threw into a KubeActionError. A write that was refused says
 * "nothing was changed"; one whose outcome is unknown (timeout, 5xx) says to look before retrying.
 */
export function toKubeActionError(err: unknown, call: KubeCall, options: { timeoutMs?: number } = {}): KubeActionError {
  if (err instanceof KubeActionError) return err;
  const write = !['get', 'list', 'watch'].includes(call.verb);
  const nothing = write ? '; nothing was changed' : '';
  // client-node's ApiException carries `code`; its Watch reports a non-200 answer as `statusCode`.
  const raw = (err as { code?: unknown; statusCode?: unknown }) ?? {};
  const code = typeof raw.code === 'number' ? raw.code : typeof raw.statusCode === 'number' ? raw.statusCode : undefined;
  if (code !== undefined && code >= 400) {
    const body = statusBody((err as { body?: unknown }).body);
    const serverSays = clip(body?.message);
    switch (code) {
      case 401:
        return new KubeActionError('unauthorized', `Cluster ${call.cluster} did not accept Glidepath's credentials (401) when it tried to ${call.verb} ${call.resource}${nothing}: check the token or kubeconfig configured for ${call.cluster}`, call, code, undefined, { cause: err });
      case 403:
        if (body?.message?.includes('admission webhook')) {
          return new KubeActionError('invalid', `${where(call)} refused to ${call.verb} ${target(call)}: ${serverSays}${nothing}`, call, code, { serverMessage: serverSays }, { cause: err });
        }
        // Sent as the person: their RBAC said no (changed since the access review), or Glidepath may not impersonate them.
        if (call.sentAs) return new KubeActionError('forbidden', `${call.sentAs} may not ${call.verb} ${call.resource} in ${where(call)}, or Glidepath may not impersonate them (impersonate on users and groups, ${RBAC_FILE})${nothing}: ${serverSays}`, call, code, undefined, { cause: err });
        return new KubeActionError('forbidden', `Glidepath's service account may not ${call.verb} ${call.resource} in ${where(call)}${nothing}: add the rule from ${RBAC_FILE}`, call, code, undefined, { cause: err });
      case 404:
        return new KubeActionError('not-found', `${call.name ? `${call.name} (${call.resource.split('/')[0]})` : call.resource} was not found in ${where(call)}${nothing}: it may have been deleted or renamed, or its CRD is not installed`, call, code, undefined, { cause: err });
      case 409:
        if (body?.reason === 'AlreadyExists') {
          return new KubeActionError('already-exists', `${target(call)} already exists in ${where(call)}${nothing}`, call, code, undefined, { cause: err });
        }
        return new KubeActionError('conflict', `${call.name ?? call.resource} changed in ${where(call)} between Glidepath reading it and writing ${call.resource}${nothing}: look at its state again and retry`, call, code, undefined, { cause: err });
      case 400:
      case 415:
      case 422: {
        const causes = (body?.details?.causes ?? []).map((c) => clip(c.field ? `${c.field}: ${c.message}` : c.message, 200)).filter(Boolean);
        const why = causes.length > 0 ? causes.join('; ') : serverSays;
        return new KubeActionError('invalid', `${where(call)} rejected the ${call.verb} of ${target(call)}: ${why}${nothing}`, call, code, { serverMessage: why }, { cause: err });
      }
      default: {
        const wait = code === 429 || code === 503 ? retryAfterMs((err as { headers?: unknown }).headers) : undefined;
        return new KubeActionError('server', `Cluster ${call.cluster} failed to ${call.verb} ${target(call)} in ${where(call)} (HTTP ${code}${serverSays ? `: ${serverSays}` : ''})${write ? '; the change may or may not have been applied, look before retrying' : ''}`, call, code, undefined, { cause: err, ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
      }
    }
  }
  if (isTimeout(err)) {
    const after = options.timeoutMs ? ` within ${options.timeoutMs} ms` : '';
    return new KubeActionError('timeout', `Cluster ${call.cluster} did not answer${after} when Glidepath tried to ${call.verb} ${target(call)} in ${where(call)}${write ? '; the change may or may not have been applied, look before retrying' : ''}`, call, undefined, undefined, { cause: err });
  }
  const net = networkCode(err);
  if (net && (UNREACHABLE.has(net) || net.startsWith('ERR_TLS') || net.startsWith('UND_ERR'))) {
    return new KubeActionError('unreachable', `Cannot reach cluster ${call.cluster} (${net}) to ${call.verb} ${call.resource}${nothing}: check that its API server is up and reachable from Glidepath`, call, undefined, undefined, { cause: err });
  }
  const text = clip(err instanceof Error ? err.message : String(err));
  if (/fetch failed|socket|connect/i.test(text)) {
    return new KubeActionError('unreachable', `Cannot reach cluster ${call.cluster} to ${call.verb} ${call.resource}${nothing} (${text}): check that its API server is up and reachable from Glidepath`, call, undefined, undefined, { cause: err });
  }
  return new KubeActionError('server', `Calling cluster ${call.cluster} to ${call.verb} ${target(call)} in ${where(call)} failed: ${text}${write ? '; the change may or may not have been applied, look before retrying' : ''}`, call, undefined, undefined, { cause: err });
}
