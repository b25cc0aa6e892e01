/**
 * The only door to a cluster: custom-object calls through client-node with a request timeout,
 * merge patches sent as merge patches (client-node 2.x defaults to JSON Patch), every failure
 * turned into a KubeActionError, and every call checked against the declared verbs.
 */
import type { ConfigurationOptions, CustomObjectsApi, KubeConfig, ObservableMiddleware, RequestContext, ResponseContext, SecurityAuthentication } from '@kubernetes/client-node';
import { clientNode } from './client-node.js';
import { ClusterConnectionPool } from './connection-pool.js';
import { KubeActionError, toKubeActionError, type KubeCall } from './errors.js';
import type { AccessAttributes, KubeIdentity } from './impersonation.js';
import type { ResourceRef } from './resources.js';
import { isDeclared } from './verbs.js';
import { DEFAULT_WATCH_MAX_LINE_BYTES, DEFAULT_WATCH_MAX_STREAM_BYTES, type WatchLineLimits } from './watch-lines.js';
import { WatchStream, type WatchEventType, type WatchHandle } from './watch-stream.js';

export type JsonPatchOperation = { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export interface ListPage {
  items: unknown[];
  resourceVersion: string;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; pages are followed until the list is complete. */
  limit?: number;
}

export type { WatchEnd, WatchEventType, WatchHandle, WatchStats } from './watch-stream.js';

/** Bounds of every watch stream, and the silence after which a watch is ended (and resumed by its caller). */
export interface KubeApiWatchOptions extends Partial<WatchLineLimits> {
  quietMs?: number;
}

/** client-node's Watch cut a quiet watch after 30 s; bookmarks keep a healthy one talking well within it. */
export const DEFAULT_WATCH_QUIET_MS = 30_000;

export const DEFAULT_PAGE_SIZE = 500;
/** Pages one list may take (a million objects at the default size): past it the server is not ending its list. */
export const MAX_LIST_PAGES = 2_000;

function timeoutMiddleware(ms: number): ObservableMiddleware {
  return {
    pre: (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new (clientNode().Observable)(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new (clientNode().Observable)(Promise.resolve(response)),
  };
}

function headerMiddleware(key: string, value: string): ObservableMiddleware {
  return {
    pre: (context: RequestContext) => {
      context.setHeaderParam(key, value);
      return new (clientNode().Observable)(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new (clientNode().Observable)(Promise.resolve(response)),
  };
}

export class KubeApi {
  private readonly custom: CustomObjectsApi;
  /** One pool of connections to the cluster, for the generated calls and the watches alike. */
  private readonly pool: ClusterConnectionPool;
  private readonly poolAuthentication: SecurityAuthentication;
  /** What writes are sent with: the pool's own credentials, or those plus a person's impersonation (as()). */
  private writeAuthentication: SecurityAuthentication;
  /** The identity this view's writes are sent as (undefined: Glidepath's own). */
  private sentAs?: KubeIdentity;
  private readonly openWatches = new Set<WatchStream>();
  private readonly watchLimits: WatchLineLimits;
  private readonly watchQuietMs: number;

  constructor(
    readonly cluster: string,
    readonly kubeConfig: KubeConfig,
    readonly requestTimeoutMs: number,
    watchOptions: KubeApiWatchOptions = {},
  ) {
    this.custom = kubeConfig.makeApiClient(clientNode().CustomObjectsApi);
    this.pool = new ClusterConnectionPool(cluster, kubeConfig);
    this.poolAuthentication = this.pool.authentication();
    this.writeAuthentication = this.poolAuthentication;
    this.watchLimits = { maxLineBytes: watchOptions.maxLineBytes ?? DEFAULT_WATCH_MAX_LINE_BYTES, maxStreamBytes: watchOptions.maxStreamBytes ?? DEFAULT_WATCH_MAX_STREAM_BYTES };
    this.watchQuietMs = watchOptions.quietMs ?? DEFAULT_WATCH_QUIET_MS;
  }

  private options(extra: ObservableMiddleware[] = [], write = false): ConfigurationOptions {
    // authMethods replaces the kubeconfig's own, which would build a new undici Agent per call.
    const authentication = write ? this.writeAuthentication : this.poolAuthentication;
    return { middleware: [timeoutMiddleware(this.requestTimeoutMs), ...extra], middlewareMergeStrategy: 'append', authMethods: { default: authentication } };
  }

  /**
   * This cluster's API whose writes (patch, create) carry `identity`'s Impersonate-User and
   * Impersonate-Group headers, so the cluster's RBAC decides and its audit log names the person.
   * Reads (gets, lists, watches) stay Glidepath's own: what it shows and re-reads does not depend
   * on who clicked. Same connections, same watches: a view, not a new client.
   */
  as(identity: KubeIdentity): KubeApi {
    const view = Object.create(this) as KubeApi;
    view.writeAuthentication = this.pool.authentication(identity);
    view.sentAs = identity;
    return view;
  }

  /** `run` builds its request options with the given builder: a write's carry the view's identity (as()), a read's never do. */
  private async call<T>(res: ResourceRef, verb: string, subresource: string | undefined, namespace: string | undefined, name: string | undefined, run: (options: (extra?: ObservableMiddleware[]) => ConfigurationOptions) => Promise<T>): Promise<T> {
    const resource = subresource ? `${res.plural}/${subresource}` : res.plural;
    const write = verb !== 'get' && verb !== 'list' && verb !== 'watch';
    const call: KubeCall = { cluster: this.cluster, verb, resource, namespace, name, ...(write && this.sentAs ? { sentAs: this.sentAs.user } : {}) };
    if (!isDeclared(res.group, resource, verb)) {
      // A programming error, caught by tests: the call has no RBAC rule in deploy/rbac.
      throw new KubeActionError('forbidden', `Glidepath tried to ${verb} ${resource} (${res.group}) without declaring it in src/kube/verbs.ts`, call);
    }
    try {
      return await run((extra) => this.options(extra, write));
    } catch (err) {
      throw toKubeActionError(err, call, { timeoutMs: this.requestTimeoutMs });
    }
  }

  get(res: ResourceRef, namespace: string, name: string): Promise<unknown> {
    return this.call(res, 'get', undefined, namespace, name, (options) =>
      this.custom.getNamespacedCustomObject({ group: res.group, version: res.version, plural: res.plural, namespace, name }, options()),
    );
  }

  /**
   * One LIST, a page at a time as it arrives (following `continue` tokens until complete), so a
   * caller holds one page, not the whole list: a list of 50,000 objects must not be gathered and
   * processed in one synchronous pass (issue 20). Every page carries the list's resourceVersion.
   */
  async *listPages(res: ResourceRef, namespace: string, options: ListOptions = {}): AsyncGenerator<ListPage, void, undefined> {
    let token: string | undefined;
    let resourceVersion = '';
    let pages = 0;
    do {
      // A server whose `continue` never ends would keep the list from ever reaching its watch.
      if (++pages > MAX_LIST_PAGES) {
        throw new KubeActionError('malformed', `Cluster ${this.cluster} answered a list of ${res.plural} in ${namespace} with more than ${MAX_LIST_PAGES} pages; the list was given up`, { cluster: this.cluster, verb: 'list', resource: res.plural, namespace });
      }
      const page = (await this.call(res, 'list', undefined, namespace, undefined, (requestOptions) =>
        this.custom.listNamespacedCustomObject(
          { group: res.group, version: res.version, plural: res.plural, namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit: options.limit ?? DEFAULT_PAGE_SIZE, _continue: token },
          requestOptions(),
        ),
      )) as { items?: unknown; metadata?: { resourceVersion?: string; continue?: string } };
      // The first page's resourceVersion is the list's snapshot; later pages repeat it.
      if (!resourceVersion) resourceVersion = page.metadata?.resourceVersion ?? '';
      token = page.metadata?.continue || undefined;
      yield { items: Array.isArray(page.items) ? (page.items as unknown[]) : [], resourceVersion };
    } while (token);
  }

  /** One LIST, complete (every page gathered): for callers that need the whole list at once. */
  async list(res: ResourceRef, namespace: string, options: ListOptions = {}): Promise<ListPage> {
    const items: unknown[] = [];
    let resourceVersion = '';
    for await (const page of this.listPages(res, namespace, options)) {
      for (const item of page.items) items.push(item);
      resourceVersion = page.resourceVersion;
    }
    return { items, resourceVersion };
  }

  patch(res: ResourceRef, namespace: string, name: string, body: unknown): Promise<unknown> {
    return this.call(res, 'patch', undefined, namespace, name, (options) =>
      this.custom.patchNamespacedCustomObject(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body },
        options([headerMiddleware('Content-Type', clientNode().PatchStrategy.MergePatch)]),
      ),
    );
  }

  /**
   * A JSON patch (RFC 6902). Its `test` operations make the write conditional on what was read,
   * without the resourceVersion: a concurrent change to the tested value fails the whole patch
   * (422), and changes to other fields do not.
   */
  jsonPatch(res: ResourceRef, namespace: string, name: string, operations: readonly JsonPatchOperation[]): Promise<unknown> {
    return this.call(res, 'patch', undefined, namespace, name, (options) =>
      this.custom.patchNamespacedCustomObject(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body: operations },
        options([headerMiddleware('Content-Type', clientNode().PatchStrategy.JsonPatch)]),
      ),
    );
  }

  patchStatus(res: ResourceRef, namespace: string, name: string, body: unknown): Promise<unknown> {
    return this.call(res, 'patch', 'status', namespace, name, (options) =>
      this.custom.patchNamespacedCustomObjectStatus(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body },
        options([headerMiddleware('Content-Type', clientNode().PatchStrategy.MergePatch)]),
      ),
    );
  }

  create(res: ResourceRef, namespace: string, body: unknown): Promise<unknown> {
    return this.call(res, 'create', undefined, namespace, undefined, (options) =>
      this.custom.createNamespacedCustomObject({ group: res.group, version: res.version, plural: res.plural, namespace, body }, options()),
    );
  }

  /**
   * `GET /version`: the API server answers, and takes our credentials (a bad token is a 401 even
   * here). Not a custom object and not in verbs.ts: Kubernetes lets every authenticated user read
   * it (system:public-info-viewer), so deploy/rbac needs no rule. Asked by `glidepath check`.
   */
  async serverVersion(): Promise<string> {
    const call: KubeCall = { cluster: this.cluster, verb: 'get', resource: 'version' };
    try {
      const info = await this.kubeConfig.makeApiClient(clientNode().VersionApi).getCode({}, this.options());
      return info.gitVersion;
    } catch (err) {
      throw toKubeActionError(err, call, { timeoutMs: this.requestTimeoutMs });
    }
  }

  /**
   * A SelfSubjectAccessReview (`kubectl auth can-i`): may Glidepath's credentials do `verb`? Not in
   * verbs.ts for the same reason as serverVersion: every authenticated user may create one
   * (system:basic-user). Nothing is changed; the answer is computed by the API server.
   */
  async canI(attributes: { group: string; resource: string; subresource?: string; verb: string; namespace?: string }): Promise<boolean> {
    return (await this.accessReview(undefined, attributes)).allowed;
  }

  /**
   * A SubjectAccessReview: may `identity` do `access`? Asked with Glidepath's own credentials
   * (declared in verbs.ts: it needs `create subjectaccessreviews`), before a write is sent as
   * that identity, so a refusal can name the missing verb and nothing is sent.
   */
  reviewAccess(identity: KubeIdentity, access: AccessAttributes): Promise<{ allowed: boolean; reason?: string }> {
    return this.accessReview(identity, access);
  }

  /** The one way an access question is asked: of Glidepath itself (no identity), or of `identity`. */
  private async accessReview(identity: KubeIdentity | undefined, access: Omit<AccessAttributes, 'namespace'> & { namespace?: string }): Promise<{ allowed: boolean; reason?: string }> {
    const resourceName = identity ? 'subjectaccessreviews' : 'selfsubjectaccessreviews';
    const call: KubeCall = { cluster: this.cluster, verb: 'create', resource: resourceName };
    if (identity && !isDeclared('authorization.k8s.io', resourceName, 'create')) throw new KubeActionError('forbidden', `Glidepath tried to create ${resourceName} without declaring it in src/kube/verbs.ts`, call);
    const { verb, group, resource, subresource, namespace, name } = access;
    const resourceAttributes = { verb, group, resource, ...(namespace ? { namespace } : {}), ...(subresource ? { subresource } : {}), ...(name ? { name } : {}) };
    const client = this.kubeConfig.makeApiClient(clientNode().AuthorizationV1Api);
    try {
      const review = identity
        ? await client.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: identity.user, groups: [...identity.groups], resourceAttributes } } }, this.options())
        : await client.createSelfSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } } }, this.options());
      return { allowed: review.status?.allowed === true, ...(review.status?.reason ? { reason: review.status.reason } : {}) };
    } catch (err) {
      throw toKubeActionError(err, call, { timeoutMs: this.requestTimeoutMs });
    }
  }

  /**
   * A WATCH from `resourceVersion`, bookmarks on (so a healthy quiet watch keeps talking), read
   * with our bounded line reader over the cluster's one connection pool (watch-stream.ts).
   * `onEvent` sees every event; the watch ends on stop(), on a server close, after `quietMs` of
   * silence or at the stream's byte budget (ordinary ends: resume from the last version seen), or
   * on an error, which `done` rejects with as a KubeActionError: an in-band ERROR event with its
   * status code, `line-too-long` for a line over the cap.
   */
  async watch(
    res: ResourceRef,
    namespace: string,
    options: { resourceVersion: string; labelSelector?: string; fieldSelector?: string },
    onEvent: (type: WatchEventType, object: unknown) => void,
  ): Promise<WatchHandle> {
    const call: KubeCall = { cluster: this.cluster, verb: 'watch', resource: res.plural, namespace };
    // The declaration check, and the headers and pool of the request (a kubeconfig that cannot
    // be applied throws here, as before; everything after the request is sent ends `done`).
    const request = await this.call(res, 'watch', undefined, namespace, undefined, () => this.pool.prepare());
    const url = new URL(`${this.pool.server}/apis/${res.group}/${res.version}/namespaces/${encodeURIComponent(namespace)}/${res.plural}`);
    const query: Record<string, string | undefined> = { watch: 'true', resourceVersion: options.resourceVersion, allowWatchBookmarks: 'true', labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
    const stream = new WatchStream({ url, call, limits: this.watchLimits, quietMs: this.watchQuietMs, headersTimeoutMs: this.requestTimeoutMs, onEvent });
    this.openWatches.add(stream);
    const handle = await stream.start(request);
    void handle.done.catch(() => undefined).finally(() => this.openWatches.delete(stream));
    return handle;
  }

  /** Ends every watch and connection to this cluster; calls after it fail. For shutdown. */
  async close(): Promise<void> {
    for (const stream of this.openWatches) stream.stop();
    this.openWatches.clear();
    await this.pool.close();
  }
}
