/**
 * The stand-in Kubernetes API server: real HTTP on 127.0.0.1, discovery, CRUD, patch, watch,
 * bearer-token authentication and RBAC over an ObjectStore. Clients cannot tell it from a real
 * API server for the calls Glidepath makes (client-node, kubectl get/patch/watch).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { answerAccessReview, answerSubjectAccessReview, type SelfSubjectAccessReview, type SubjectAccessReview } from './access-review.js';
import { Authorizer, type SandboxUser } from './auth.js';
import { AUTHORIZATION_RESOURCES, coreResourceList, coreVersions, group, groupList, groupResourceList, VERSION_INFO } from './discovery.js';
import { ApiError, badRequest, forbidden, notFound } from './errors.js';
import { subjectOf, type RequestSubject } from './impersonation.js';
import { isTrue, JSON_TYPE, patchTypeOf, readBody, readBuffer, send, sendError, verbOf, type ResourcePath } from './http-io.js';
import { writeKubeconfig } from './kubeconfig.js';
import type { KubeObject } from './object.js';
import { OpenApiDocuments } from './openapi.js';
import { decodeSelfSubjectAccessReview, isKubernetesProtobuf } from './protobuf.js';
import { ResourceRegistry, apiVersionOf } from './resources.js';
import { serveScale } from './scale.js';
import { ObjectStore, type WriteOptions } from './store.js';
import { toTable, wantsTable } from './table.js';
import { sandboxCertificate } from './tls.js';
import { WatchStreams } from './watch-streams.js';

export interface KubeServerOptions {
  store?: ObjectStore;
  users: SandboxUser[];
  /** 0 picks a free port. */
  port?: number;
  /** Interval of BOOKMARK events on watches that allow them (real time). */
  bookmarkIntervalMs?: number;
  maxBodyBytes?: number;
  /**
   * https by default: kubectl (client-go) does not send a bearer token over plain http. The
   * certificate is a fixed self-signed one for 127.0.0.1, shipped for the sandbox only.
   */
  scheme?: 'https' | 'http';
  /**
   * Called synchronously before each resource request is served (after authentication), so a
   * test can change an object between a client's read and its write, as a controller would.
   */
  onRequest?: (request: ServedRequest) => void;
}

export interface ServedRequest {
  verb: string;
  /** `rollouts`, `rollouts/status`. */
  resource: string;
  namespace?: string;
  name?: string;
  /** The labelSelector a list or watch sent, if any. */
  labelSelector?: string;
  /** Who it was served as (the impersonated user and groups when the caller impersonated someone). */
  subject: RequestSubject;
}

/** Writes kept in KubeServer.writes, newest last. */
const WRITES_KEPT = 1_000;


/** What a hostile answer can read and write: the raw request, its URL (query parameters), the response. */
export interface HostileExchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** True for `?watch=true`. */
  watch: boolean;
}

export class KubeServer {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  readonly authorizer: Authorizer;
  private readonly http: Server;
  readonly watches: WatchStreams;
  private bookmarkTimer?: NodeJS.Timeout;
  private readonly maxBodyBytes: number;
  private readonly openapi: OpenApiDocuments;
  port = 0;
  /** Resource requests served, by `verb resource` (e.g. `list applications`, `patch rollouts/status`). */
  readonly requestCounts = new Map<string, number>();
  /** The writes served (create, update, patch, delete), with who each was made as: what an audit log would say. */
  readonly writes: ServedRequest[] = [];
  /** See KubeServerOptions.onRequest; may be replaced while the server runs. */
  onRequest?: (request: ServedRequest) => void;
  /**
   * How long to hold a resource request before serving it (real milliseconds; 0 or undefined: at
   * once), as a loaded API server answers some lists later than others. Tests set it.
   */
  serveDelayMs?: (request: ServedRequest) => number | undefined;
  /**
   * A server that turns hostile on command: called for each resource request after it is
   * authenticated and counted; when it returns true it has answered the request itself (a watch
   * that never sends a newline, 410 on every resume, a list that ignores labelSelector, a 429 with
   * Retry-After) and the store is not consulted. Tests and benches set and clear it.
   */
  hostile?: (request: ServedRequest, exchange: HostileExchange) => boolean;
  /** TCP connections open now (a client that opens one per request piles them up). */
  private readonly sockets = new Set<Socket>();
  /** TCP connections accepted since the server started. */
  connectionsAccepted = 0;

  constructor(private readonly options: KubeServerOptions) {
    this.store = options.store ?? new ObjectStore(new ResourceRegistry());
    this.registry = this.store.registry;
    this.authorizer = new Authorizer(options.users);
    this.maxBodyBytes = options.maxBodyBytes ?? 3 * 1024 * 1024;
    this.onRequest = options.onRequest;
    this.openapi = new OpenApiDocuments(this.registry);
    this.watches = new WatchStreams(this.store);
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.handle(req, res).catch((err: unknown) => {
        const apiErr = err instanceof ApiError ? err : new ApiError(500, 'InternalError', `Internal error occurred: ${String(err)}`);
        if (!res.headersSent) sendError(res, apiErr);
        else res.end();
      });
    };
    this.scheme = options.scheme ?? 'https';
    this.http = this.scheme === 'https' ? createTlsServer(sandboxCertificate(), handler) : createServer(handler);
    this.http.on('connection', (socket: Socket) => {
      this.connectionsAccepted++;
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** TCP connections open at this moment, idle keep-alive ones included. */
  openConnections(): number {
    return this.sockets.size;
  }

  readonly scheme: 'https' | 'http';

  get url(): string {
    return `${this.scheme}://127.0.0.1:${this.port}`;
  }

  /** PEM of the CA that signs the server certificate (undefined over http). */
  get caPem(): string | undefined {
    return this.scheme === 'https' ? sandboxCertificate().cert : undefined;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.options.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.port = (this.http.address() as AddressInfo).port;
    this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.options.bookmarkIntervalMs ?? 10_000);
    this.bookmarkTimer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.dropWatches();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** Kubeconfig with one context per user (the first user's context is named after the cluster). */
  writeKubeconfig(path: string, clusterName = 'sandbox', defaultUser?: string): void {
    const users = this.authorizer.users();
    writeKubeconfig(path, [{ name: clusterName, server: this.url, caPem: this.caPem, users, defaultUser: defaultUser ?? users[0]?.name ?? '' }]);
  }

  /** Sends a BOOKMARK with the current resourceVersion on every watch that asked for them. */
  sendBookmarks(): void {
    this.watches.sendBookmarks();
  }

  /** Ends every open watch, as an API server restart would. */
  dropWatches(): void {
    this.watches.dropAll();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';

    if (segments[0] === 'healthz' || segments[0] === 'readyz' || segments[0] === 'livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    const caller = this.authorizer.authenticate(req.headers.authorization);
    if (!caller) {
      sendError(res, new ApiError(401, 'Unauthorized', 'Unauthorized'));
      return;
    }
    // From here on the request is the impersonated identity's, as on a real API server.
    const subject = subjectOf(this.authorizer, caller.name, req);
    const user = { name: subject.user };
    if (segments[0] === 'version' && segments.length === 1) return send(res, 200, VERSION_INFO);
    if (segments[0] === 'openapi' && segments[1] === 'v3') {
      if (segments.length === 2) return send(res, 200, this.openapi.root());
      const [kind, a, b] = segments.slice(2);
      const text = kind === 'api' ? this.openapi.document('', a ?? '') : kind === 'apis' ? this.openapi.document(a ?? '', b ?? '') : undefined;
      if (!text) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      res.writeHead(200, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (segments[0] === 'api' && segments.length === 1) return send(res, 200, coreVersions(`127.0.0.1:${this.port}`));
    if (segments[0] === 'api' && segments.length === 2 && segments[1] === 'v1') return send(res, 200, coreResourceList(this.registry));
    if (segments[0] === 'apis' && segments.length === 1) return send(res, 200, groupList(this.registry));
    if (segments[0] === 'apis' && segments.length === 2) {
      const doc = group(this.registry, segments[1]!);
      return doc ? send(res, 200, doc) : sendError(res, notFound('', '', url.pathname));
    }
    if (segments[0] === 'apis' && segments.length === 3 && segments[1] === 'authorization.k8s.io' && segments[2] === 'v1') return send(res, 200, AUTHORIZATION_RESOURCES);
    if (segments[0] === 'apis' && segments.length === 3) {
      const doc = groupResourceList(this.registry, segments[1]!, segments[2]!);
      return doc ? send(res, 200, doc) : sendError(res, new ApiError(404, 'NotFound', 'the server could not find the requested resource'));
    }
    const protobuf = (req.headers['content-type'] ?? '').includes('protobuf');
    if (method === 'POST' && url.pathname === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') {
      const raw = await readBuffer(req, this.maxBodyBytes);
      const review: SelfSubjectAccessReview = protobuf && isKubernetesProtobuf(raw)
        ? { spec: { resourceAttributes: decodeSelfSubjectAccessReview(raw) } }
        : (JSON.parse(raw.toString('utf8')) as SelfSubjectAccessReview);
      return send(res, 201, answerAccessReview(this.authorizer, subject, review));
    }
    if (method === 'POST' && url.pathname === '/apis/authorization.k8s.io/v1/subjectaccessreviews' && !protobuf) {
      if (!this.authorizer.can({ user: subject.user, groups: subject.groups, verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' })) {
        throw forbidden(subject.user, 'create', 'subjectaccessreviews', 'authorization.k8s.io', undefined);
      }
      const review = JSON.parse((await readBuffer(req, this.maxBodyBytes)).toString('utf8')) as SubjectAccessReview;
      // Counted as a write would be, so a test can tell how often a person's access was asked.
      this.requestCounts.set('create subjectaccessreviews', (this.requestCounts.get('create subjectaccessreviews') ?? 0) + 1);
      return send(res, 201, answerSubjectAccessReview(this.authorizer, review));
    }
    if (protobuf) {
      throw new ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json, application/json-patch+json');
    }
    const path = this.resolve(segments);
    if (!path) {
      sendError(res, new ApiError(404, 'NotFound', 'the server could not find the requested resource'));
      return;
    }
    const watch = isTrue(url.searchParams.get('watch'));
    const verb = verbOf(method, path, watch);
    const sub = path.subresource;
    const labelSelector = url.searchParams.get('labelSelector') ?? undefined;
    const served: ServedRequest = { verb, resource: sub ? `${path.rt.plural}/${sub}` : path.rt.plural, namespace: path.namespace, name: path.name, ...(labelSelector !== undefined ? { labelSelector } : {}), subject };
    const countKey = `${served.verb} ${served.resource}`;
    this.requestCounts.set(countKey, (this.requestCounts.get(countKey) ?? 0) + 1);
    this.onRequest?.(served);
    if (this.hostile?.(served, { req, res, url, watch })) return;
    const delayMs = this.serveDelayMs?.(served);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (sub !== undefined && sub !== 'status' && !(sub === 'scale' && path.rt.scale)) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    if (!this.authorizer.can({ user: user.name, groups: subject.groups, verb, group: path.rt.group, resource: path.rt.plural, subresource: sub, namespace: path.namespace, name: path.name })) {
      throw forbidden(user.name, verb, sub ? `${path.rt.plural}/${sub}` : path.rt.plural, path.rt.group, path.namespace, path.name);
    }
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await readBody(req, this.maxBodyBytes) : '';
    const parse = (): unknown => {
      try {
        return JSON.parse(body);
      } catch {
        throw badRequest('the request body is not valid JSON');
      }
    };
    const { rt, namespace, name } = path;
    const table = wantsTable(req.headers.accept);
    const now = this.store.clock.now();

    if (sub === 'scale') return serveScale(this.store, method, path, parse, user.name, res);

    if (method === 'GET' && watch) return this.watches.start(path.rt, path.namespace, url.searchParams, res, table);
    if (method === 'GET' && name) {
      const obj = this.store.get(rt, namespace, name);
      return send(res, 200, table ? toTable(rt, [obj], obj.metadata.resourceVersion ?? '', now) : obj);
    }
    if (method === 'GET') {
      const limit = url.searchParams.get('limit');
      const result = this.store.list(rt, namespace, {
        labelSelector: url.searchParams.get('labelSelector') ?? undefined,
        fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
        limit: limit ? Number(limit) : undefined,
        continue: url.searchParams.get('continue') ?? undefined,
      });
      if (table) return send(res, 200, toTable(rt, result.items, result.resourceVersion, now, result.continue));
      return send(res, 200, {
        apiVersion: apiVersionOf(rt),
        kind: rt.listKind,
        metadata: {
          resourceVersion: result.resourceVersion,
          ...(result.continue ? { continue: result.continue, remainingItemCount: result.remainingItemCount } : {}),
        },
        items: result.items,
      });
    }
    const subresource = sub === 'status' ? ('status' as const) : undefined;
    const dryRun = url.searchParams.getAll('dryRun').includes('All');
    const validation = url.searchParams.get('fieldValidation');
    const warnings: string[] = [];
    if (['create', 'update', 'patch', 'delete'].includes(verb)) {
      this.writes.push(served);
      if (this.writes.length > WRITES_KEPT) this.writes.shift();
    }
    const write: WriteOptions = {
      user: user.name,
      groups: subject.groups,
      subresource,
      dryRun,
      warnings,
      fieldValidation: validation === 'Strict' || validation === 'Ignore' ? validation : ('Warn' as const),
    };
    const sendWritten = (code: number, obj: KubeObject): void => {
      // Warnings travel in the standard Warning header (code 299), as kubectl prints them.
      if (warnings.length > 0) res.setHeader('Warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
      send(res, code, obj);
    };
    if (method === 'POST' && !name) return sendWritten(201, this.store.create(rt, namespace, parse() as KubeObject, write));
    if (method === 'PUT' && name) return sendWritten(200, this.store.update(rt, namespace, name, parse() as KubeObject, write));
    if (method === 'PATCH' && name) {
      const type = patchTypeOf(req.headers['content-type'], rt);
      return sendWritten(200, this.store.patch(rt, namespace, name, type, parse(), write));
    }
    if (method === 'DELETE' && name) {
      let precondition: string | undefined;
      if (body.trim()) {
        const opts = parse() as { preconditions?: { resourceVersion?: string } };
        precondition = opts.preconditions?.resourceVersion;
      }
      return send(res, 200, this.store.delete(rt, namespace, name, { user: user.name, resourceVersion: precondition, dryRun }));
    }
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  private resolve(segments: string[]): ResourcePath | undefined {
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api' && segments[1] === 'v1') {
      group = '';
      version = 'v1';
      rest = segments.slice(2);
    } else if (segments[0] === 'apis' && segments.length >= 4) {
      group = segments[1]!;
      version = segments[2]!;
      rest = segments.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      const candidate = this.registry.find(group, version, rest[2]!);
      if (candidate?.namespaced) {
        namespace = rest[1];
        rest = rest.slice(2);
      }
    }
    const rt = this.registry.find(group, version, rest[0] ?? '');
    if (!rt || rest.length > 3) return undefined;
    return { rt, namespace, name: rest[1], subresource: rest[2] };
  }
}

export async function startKubeServer(options: KubeServerOptions): Promise<KubeServer> {
  return new KubeServer(options).listen();
}
