/**
 * A small client of Kargo's own REST API (`/v1beta1`, akuity/kargo `pkg/server`), for what the
 * Kubernetes API cannot do: promoting a target-aware Stage (Kargo main / 1.12, `spec.targets`).
 * Kargo refuses a Promotion created directly for such a Stage; its API server checks the `promote`
 * verb on the Stage for the caller's token and creates a PromotionRequest with its own client.
 *
 * One request per call, bounded in time and in response size. Kargo's 4xx answers are refusals
 * (values naming the cause, nothing was changed); 5xx, timeouts and the network are
 * KubeActionErrors, the unexpected. The server's words are untrusted: one line, bounded, escaped.
 */
import type { KargoApiEndpoint } from '../config/kargo-api.js';
import { KubeActionError, type KubeCall } from './errors.js';
import { refused, done, type Refusable } from './refusal.js';

export const DEFAULT_KARGO_API_TIMEOUT_MS = 10_000;
/** A Promotion with its copied steps is a few KiB; a PromotionRequest lists its Targets. */
export const DEFAULT_KARGO_API_MAX_BYTES = 1024 * 1024;

/** Where Kargo's API is and the token for it: the config's to say (src/config/kargo-api.ts). */
export type { KargoApiEndpoint };

export interface KargoApiClientOptions extends KargoApiEndpoint {
  cluster: string;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** Which Freight to promote: by name or by alias, exactly one (Kargo's `promoteToStageRequest`). */
export type FreightChoice = { freight: string } | { freightAlias: string };

export type KargoApiRefusal =
  /** 403: the token lacks the `promote` verb on the Stage. */
  | { why: 'forbidden'; status: number; serverMessage: string }
  /** 401: the token was not accepted. */
  | { why: 'unauthorized'; status: number; serverMessage: string }
  /** 404: no such Stage or Freight. */
  | { why: 'not-found'; status: number; serverMessage: string }
  /** 400 "is not available to Stage": the Freight is not (yet) available. */
  | { why: 'unavailable'; status: number; serverMessage: string }
  /** Any other 4xx. */
  | { why: 'rejected'; status: number; serverMessage: string };

export type PromoteViaApiOutcome = Refusable<{ status: number; body: unknown }, KargoApiRefusal>;

function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim().replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Reads at most `max` bytes of a body; more is an error (the connection is dropped). */
async function boundedText(res: Response, max: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class KargoApiClient {
  readonly cluster: string;
  readonly url: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(options: KargoApiClientOptions) {
    this.cluster = options.cluster;
    this.url = options.url.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_KARGO_API_TIMEOUT_MS;
    this.maxBytes = options.maxResponseBytes ?? DEFAULT_KARGO_API_MAX_BYTES;
  }

  /**
   * Whether Kargo's API answers and takes the token, changing nothing (`glidepath check`):
   * `GET /v1beta1/projects`. The token is checked before the route and the caller's rights, so a
   * 401 is the token refused and any other answer (200; 403 for a token that may promote but not
   * list projects; 404) is the token taken.
   */
  async checkToken(): Promise<{ kind: 'accepted'; status: number } | { kind: 'rejected'; status: number; serverMessage: string } | { kind: 'unreachable'; detail: string }> {
    let res: Response;
    try {
      res = await fetch(`${this.url}/v1beta1/projects`, { headers: { authorization: `Bearer ${this.token}`, accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'unreachable', detail: `no answer within ${this.timeoutMs} ms` };
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      return { kind: 'unreachable', detail: typeof code === 'string' ? code : oneLine((err as Error).message, 120) };
    }
    const text = (await boundedText(res, 64 * 1024).catch(() => undefined)) ?? '';
    if (res.status !== 401) return { kind: 'accepted', status: res.status };
    let said = text;
    try {
      const error = (JSON.parse(text) as { error?: unknown }).error;
      if (typeof error === 'string') said = error;
    } catch {
      // Not Kargo's JSON: its words as they are, bounded.
    }
    return { kind: 'rejected', status: res.status, serverMessage: oneLine(said, 200) };
  }

  /**
   * `POST /v1beta1/projects/{project}/stages/{stage}/promotions` with `{freight}` or
   * `{freightAlias}`: Kargo answers 201 with the Promotion it created, or for a target-aware Stage
   * the PromotionRequest. The caller parses the body with the schema it expects.
   */
  async promoteToStage(project: string, stage: string, choice: FreightChoice): Promise<PromoteViaApiOutcome> {
    const call: KubeCall = { cluster: this.cluster, verb: 'promote', resource: 'stages', namespace: project, name: stage };
    const path = `/v1beta1/projects/${encodeURIComponent(project)}/stages/${encodeURIComponent(stage)}/promotions`;
    const api = `Kargo's API (${this.url}) of cluster ${this.cluster}`;
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(choice),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new KubeActionError('timeout', `${api} did not answer within ${this.timeoutMs} ms when Glidepath asked to promote Stage ${stage} in ${project}; the promotion may or may not have been created, look before retrying`, call, undefined, undefined, { cause: err });
      }
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      // Refused or unresolved: the request never left; anything else may have reached Kargo.
      const outcome = code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'nothing was changed' : 'the promotion may or may not have been created, look before retrying';
      throw new KubeActionError('unreachable', `Cannot reach ${api} to promote Stage ${stage} in ${project} (${typeof code === 'string' ? code : oneLine((err as Error).message, 120)}); ${outcome}: check kargoApi.url of cluster ${this.cluster}`, call, undefined, undefined, { cause: err });
    }
    let text: string | undefined;
    try {
      text = await boundedText(res, this.maxBytes);
    } catch (err) {
      throw new KubeActionError('server', `${api} broke off its answer to the promotion of Stage ${stage} in ${project} (HTTP ${res.status}); the promotion may or may not have been created, look before retrying`, call, res.status, undefined, { cause: err });
    }
    if (text === undefined) {
      throw new KubeActionError('malformed', `${api} answered the promotion of Stage ${stage} in ${project} with more than ${this.maxBytes} bytes (HTTP ${res.status}); the promotion may or may not have been created, look before retrying`, call, res.status);
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const serverSays = oneLine(typeof (body as { error?: unknown } | undefined)?.error === 'string' ? (body as { error: string }).error : text.slice(0, 300));
    if (res.status === 200 || res.status === 201) {
      if (body === undefined) throw new KubeActionError('malformed', `${api} answered the promotion of Stage ${stage} in ${project} with HTTP ${res.status} but no JSON; look at the Stage before retrying`, call, res.status);
      return done({ status: res.status, body });
    }
    const details = { status: res.status, serverMessage: serverSays };
    const nothing = 'nothing was changed';
    if (res.status === 403) {
      return refused(`Glidepath's Kargo token may not promote Stage ${stage} in ${this.cluster}/${project} (needs the promote verb on stages.kargo.akuity.io/${stage}); ${nothing}. Kargo said: ${serverSays}`, call, { why: 'forbidden', ...details });
    }
    if (res.status === 401) {
      return refused(`${api} did not accept Glidepath's token (401); ${nothing}: check the token of cluster ${this.cluster} in KARGO_API_TOKENS`, call, { why: 'unauthorized', ...details });
    }
    if (res.status === 404) return refused(`${api} found nothing to promote: ${serverSays}; ${nothing}`, call, { why: 'not-found', ...details });
    if (res.status === 400 && /not available to Stage/i.test(serverSays)) {
      return refused(`Freight not available: ${serverSays}; ${nothing}`, call, { why: 'unavailable', ...details });
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      return refused(`${api} refused to promote Stage ${stage} in ${project} (HTTP ${res.status}): ${serverSays}; ${nothing}`, call, { why: 'rejected', ...details });
    }
    throw new KubeActionError('server', `${api} failed to promote Stage ${stage} in ${project} (HTTP ${res.status}${serverSays ? `: ${serverSays}` : ''}); the promotion may or may not have been created, look before retrying`, call, res.status);
  }
}
