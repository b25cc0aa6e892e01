/**
 * A stand-in for Kargo's API server (`/v1beta1`, akuity/kargo `pkg/server`), only the endpoint
 * Glidepath uses: `POST /v1beta1/projects/{project}/stages/{stage}/promotions` (promote_to_stage.go).
 * Real HTTP on 127.0.0.1; bearer tokens are the stand-in cluster's users. As Kargo does it: exactly
 * one of `freight` | `freightAlias` | `origin`; the Stage must exist; the caller needs the `promote`
 * verb on it (the cluster's RBAC, as a SubjectAccessReview would answer); the Freight must be
 * available. A classic Stage gets a Promotion created as the caller (Kargo's webhook names it);
 * a target-aware Stage gets a PromotionRequest created by Kargo's own identity, which the caller
 * could not create. Errors are `{"error": "…"}` with Kargo's status codes and words.
 * `origin` is answered only for target-aware Stages (refused, as Kargo does); for classic ones the
 * stand-in does not resolve auto-promotion candidates and says so (400).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Authorizer } from './auth.js';
import { ApiError } from './errors.js';
import { readBody } from './http-io.js';
import type { KubeObject } from './object.js';
import type { ObjectStore } from './store.js';
import { freightAvailable } from './controllers/kargo-admission.js';
import { createPromotionRequest } from './controllers/kargo-requests.js';

const ROUTE = /^\/v1beta1\/projects\/([^/]+)\/stages\/([^/]+)\/promotions$/;

/** One request as it arrived: what a test asserts Glidepath sent. */
export interface KargoApiRequest {
  method: string;
  path: string;
  /** The bearer token, as sent. */
  token?: string;
  body: unknown;
  status: number;
}

export interface KargoApiStandIn {
  url: string;
  received: KargoApiRequest[];
  /** Answers every request with this status and Kargo's error body instead (a 5xx, say), until unset. */
  failWith?: { status: number; error: string };
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** `port`: a fixed port (the sandbox writes the URL into Glidepath's config before the world starts); default any free one. */
export async function startKargoApiServer(options: { store: ObjectStore; authorizer: Authorizer; port?: number }): Promise<KargoApiStandIn> {
  const { store, authorizer } = options;
  const rt = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');

  const promote = (project: string, stageName: string, user: string, body: Record<string, unknown>): [number, KubeObject] => {
    const given = (['freight', 'freightAlias', 'origin'] as const).filter((k) => typeof body[k] === 'string' && body[k] !== '');
    if (given.length !== 1) throw new HttpError(400, 'exactly one of freight, freightAlias, or origin must be provided');
    const stage = store.tryGet(rt('Stage'), project, stageName);
    if (!stage) throw new HttpError(404, `Stage "${stageName}" not found in project "${project}"`);
    if (!authorizer.can({ user, verb: 'promote', group: 'kargo.akuity.io', resource: 'stages', namespace: project, name: stageName })) {
      throw new HttpError(403, `stages.kargo.akuity.io "${stageName}" is forbidden: promote is not permitted`);
    }
    const targetAware = stage.spec?.targets !== undefined;
    if (given[0] === 'origin') {
      throw new HttpError(400, targetAware ? `promotion by origin is not supported for Stage "${stageName}", which selects Targets` : 'promotion by origin is not simulated by this stand-in');
    }
    let freight: KubeObject | undefined;
    if (given[0] === 'freight') {
      freight = store.tryGet(rt('Freight'), project, body.freight as string);
      if (!freight) throw new HttpError(404, `Freight "${body.freight as string}" not found in project "${project}"`);
    } else {
      freight = store.list(rt('Freight'), project, { labelSelector: `kargo.akuity.io/alias=${body.freightAlias as string}` }).items[0];
      if (!freight) throw new HttpError(404, `Freight with alias "${body.freightAlias as string}" not found in project "${project}"`);
    }
    if (!freightAvailable(stage, freight)) throw new HttpError(400, `Freight "${freight.metadata.name}" is not available to Stage "${stageName}"`);
    const actor = `kubernetes:${user}`;
    // A PromotionRequest is made by Kargo's own client (no user holds that permission).
    if (targetAware) return [201, createPromotionRequest(store, stage, freight.metadata.name, actor)];
    const created = store.create(rt('Promotion'), project, {
      apiVersion: 'kargo.akuity.io/v1alpha1',
      kind: 'Promotion',
      metadata: { name: '', generateName: 'promo-', annotations: { 'kargo.akuity.io/create-actor': actor } },
      spec: { stage: stageName, freight: freight.metadata.name },
    }, { user });
    return [201, created];
  };

  const standIn: KargoApiStandIn = { url: '', received: [], close: async () => undefined };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    const token = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    let body: unknown;
    const record = (status: number) => standIn.received.push({ method: req.method ?? '', path, ...(token !== undefined ? { token } : {}), body, status });
    try {
      const raw = req.method === 'POST' ? await readBody(req, 1024 * 1024) : '';
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        throw new HttpError(400, 'invalid JSON body');
      }
      if (standIn.failWith) throw new HttpError(standIn.failWith.status, standIn.failWith.error);
      if (!token) throw new HttpError(401, 'no token provided');
      const user = authorizer.authenticate(`Bearer ${token}`);
      if (!user) throw new HttpError(401, 'invalid token');
      const route = ROUTE.exec(path);
      if (!route || req.method !== 'POST') throw new HttpError(404, `no route for ${req.method} ${path} in this stand-in`);
      if (typeof body !== 'object' || body === null) throw new HttpError(400, 'invalid JSON body');
      const [status, object] = promote(decodeURIComponent(route[1]!), decodeURIComponent(route[2]!), user.name, body as Record<string, unknown>);
      record(status);
      reply(res, status, object);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : err instanceof ApiError ? err.code : 500;
      // Kargo hides a 500's cause; a webhook's refusal of the Promotion it created is passed on.
      const message = status === 500 ? 'internal server error' : (err as Error).message;
      record(status);
      reply(res, status, { error: message });
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  standIn.url = `http://127.0.0.1:${port}`;
  standIn.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return standIn;
}
