/**
 * The only door to a cluster: custom-object calls through client-node with a request timeout,
 * merge patches sent as merge patches (client-node 2.x defaults to JSON Patch), every failure
 * turned into a KubeActionError, and every call checked against the declared verbs.
 */
import type { ConfigurationOptions, CustomObjectsApi, KubeConfig, ObservableMiddleware, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { clientNode } from './client-node.js';
import { KubeActionError, toKubeActionError, type KubeCall } from './errors.js';
import type { ResourceRef } from './resources.js';
import { isDeclared } from './verbs.js';

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

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchHandle {
  stop(): void;
  /** Resolves when the watch ends (server close, error, or stop()). */
  done: Promise<void>;
}

export const DEFAULT_PAGE_SIZE = 500;

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

  constructor(
    readonly cluster: string,
    readonly kubeConfig: KubeConfig,
    readonly requestTimeoutMs: number,
  ) {
    this.custom = kubeConfig.makeApiClient(clientNode().CustomObjectsApi);
  }

  private options(extra: ObservableMiddleware[] = []): ConfigurationOptions {
    return { middleware: [timeoutMiddleware(this.requestTimeoutMs), ...extra], middlewareMergeStrategy: 'append' };
  }

  private async call<T>(res: ResourceRef, verb: string, subresource: string | undefined, namespace: string | undefined, name: string | undefined, run: () => Promise<T>): Promise<T> {
    const resource = subresource ? `${res.plural}/${subresource}` : res.plural;
    const call: KubeCall = { cluster: this.cluster, verb, resource, namespace, name };
    if (!isDeclared(res.group, resource, verb)) {
      // A programming error, caught by tests: the call has no RBAC rule in deploy/rbac.
      throw new KubeActionError('forbidden', `Glidepath tried to ${verb} ${resource} (${res.group}) without declaring it in src/kube/verbs.ts`, call);
    }
    try {
      return await run();
    } catch (err) {
      throw toKubeActionError(err, call, { timeoutMs: this.requestTimeoutMs });
    }
  }

  get(res: ResourceRef, namespace: string, name: string): Promise<unknown> {
    return this.call(res, 'get', undefined, namespace, name, () =>
      this.custom.getNamespacedCustomObject({ group: res.group, version: res.version, plural: res.plural, namespace, name }, this.options()),
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
    do {
      const page = (await this.call(res, 'list', undefined, namespace, undefined, () =>
        this.custom.listNamespacedCustomObject(
          { group: res.group, version: res.version, plural: res.plural, namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit: options.limit ?? DEFAULT_PAGE_SIZE, _continue: token },
          this.options(),
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
    return this.call(res, 'patch', undefined, namespace, name, () =>
      this.custom.patchNamespacedCustomObject(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body },
        this.options([headerMiddleware('Content-Type', clientNode().PatchStrategy.MergePatch)]),
      ),
    );
  }

  /**
   * A JSON patch (RFC 6902). Its `test` operations make the write conditional on what was read,
   * without the resourceVersion: a concurrent change to the tested value fails the whole patch
   * (422), and changes to other fields do not.
   */
  jsonPatch(res: ResourceRef, namespace: string, name: string, operations: readonly JsonPatchOperation[]): Promise<unknown> {
    return this.call(res, 'patch', undefined, namespace, name, () =>
      this.custom.patchNamespacedCustomObject(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body: operations },
        this.options([headerMiddleware('Content-Type', clientNode().PatchStrategy.JsonPatch)]),
      ),
    );
  }

  patchStatus(res: ResourceRef, namespace: string, name: string, body: unknown): Promise<unknown> {
    return this.call(res, 'patch', 'status', namespace, name, () =>
      this.custom.patchNamespacedCustomObjectStatus(
        { group: res.group, version: res.version, plural: res.plural, namespace, name, body },
        this.options([headerMiddleware('Content-Type', clientNode().PatchStrategy.MergePatch)]),
      ),
    );
  }

  create(res: ResourceRef, namespace: string, body: unknown): Promise<unknown> {
    return this.call(res, 'create', undefined, namespace, undefined, () =>
      this.custom.createNamespacedCustomObject({ group: res.group, version: res.version, plural: res.plural, namespace, body }, this.options()),
    );
  }

  /**
   * A WATCH from `resourceVersion` (bookmarks on, so a quiet watch is not cut by client-node's
   * 30 s inactivity timeout). `onEvent` sees every event; the watch ends on stop(), on a server
   * close, or on an error, which `onEnd` receives as a KubeActionError.
   */
  async watch(
    res: ResourceRef,
    namespace: string,
    options: { resourceVersion: string; labelSelector?: string; fieldSelector?: string },
    onEvent: (type: WatchEventType, object: unknown) => void,
  ): Promise<WatchHandle> {
    const call: KubeCall = { cluster: this.cluster, verb: 'watch', resource: res.plural, namespace };
    // Only the declaration check: the watch itself reports through its callbacks.
    await this.call(res, 'watch', undefined, namespace, undefined, async () => undefined);
    let finish!: () => void;
    let failure: KubeActionError | undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const path = `/apis/${res.group}/${res.version}/namespaces/${encodeURIComponent(namespace)}/${res.plural}`;
    let controller: AbortController | undefined;
    let stopped = false;
    try {
      controller = await new (clientNode().Watch)(this.kubeConfig).watch(
        path,
        { resourceVersion: options.resourceVersion, allowWatchBookmarks: true, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
        (type, object) => {
          if (type === 'ERROR') {
            const status = object as { code?: number; message?: string };
            failure = toKubeActionError({ code: status.code ?? 500, body: status }, call);
          }
          onEvent(type as WatchEventType, object);
        },
        (err) => {
          // client-node cuts a watch that has been quiet for 30 s (TimeoutError). That is an end
          // like a server close: callers resume from the last version they saw.
          const quiet = (err as { name?: unknown } | null)?.name === 'TimeoutError';
          if (err && !stopped && !quiet) failure = toKubeActionError(err, call);
          finish();
        },
      );
    } catch (err) {
      throw toKubeActionError(err, call);
    }
    return {
      stop: () => {
        stopped = true;
        controller?.abort();
        finish();
      },
      done: done.then(() => {
        if (failure) throw failure;
      }),
    };
  }
}
