/**
 * One resumable list+watch of one kind in one namespace, with the label selector sent to the API
 * server, as an informer does it: LIST (paginated) for the current state, then WATCH from the
 * list's resourceVersion with bookmarks on, resuming from the last version seen when the watch
 * ends (server close, client-node's 30 s quiet cut, a network error), and listing again when that
 * version is gone (410 Expired, after etcd compaction or an API server restart). Failures back off
 * exponentially (capped) and the backoff resets once a watch delivers.
 */
import type { KubeApi, WatchEventType, WatchHandle } from '../../kube/api.js';
import { KubeActionError } from '../../kube/errors.js';
import type { ResourceRef } from '../../kube/resources.js';

export interface ListWatchScope {
  cluster: string;
  resource: ResourceRef;
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListWatchEvents {
  /** Every object of a (re)list, then every ADDED or MODIFIED object of the watch. */
  onObject(object: unknown, how: 'list' | 'watch'): void;
  /**
   * An object left the scope: deleted, or (with a label selector) its labels no longer match, which
   * the API server says as DELETED; or missing from a relist (its deletion fell in a gap). Only
   * scopes that pass this are tracked (the objects last seen are kept, so keep such scopes small).
   */
  onDeleted?(object: unknown, how: 'watch' | 'relist'): void;
  /** A watch ended and resumes from `resourceVersion` (`relist`: the version was gone, so it lists again). */
  onRestart?(reason: string, relist: boolean): void;
}

export interface ListWatchOptions {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** List again this often even without a 410, as an informer's resync does (0: never). */
  relistEveryMs?: number;
  /** Awaited before every (re)list, before the API server is asked (list-order.ts: what lists first). */
  beforeList?: () => Promise<void> | void;
  /** Awaited after a list delivered every object, before the watch starts. */
  afterList?: () => Promise<void> | void;
}

function objectKey(object: unknown): string {
  const meta = (object as { metadata?: { namespace?: string; name?: string } } | null)?.metadata;
  return `${meta?.namespace ?? ''}/${meta?.name ?? ''}`;
}

function isGone(err: unknown): boolean {
  return err instanceof KubeActionError && err.status === 410;
}

export class ListWatch {
  private stopped = false;
  private handle?: WatchHandle;
  private wake?: () => void;
  private resourceVersion = '';
  /** Objects last seen, by namespace/name (only when the caller hears deletions). */
  private known = new Map<string, unknown>();
  private running?: Promise<void>;
  /** Counts, for metrics and tests. */
  readonly counts = { lists: 0, watches: 0, restarts: 0 };

  constructor(
    private readonly api: KubeApi,
    readonly scope: ListWatchScope,
    private readonly events: ListWatchEvents,
    private readonly options: ListWatchOptions = {},
  ) {}

  start(): this {
    this.running ??= this.loop();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.handle?.stop();
    this.wake?.();
    await this.running;
  }

  private async list(): Promise<void> {
    const page = await this.api.list(this.scope.resource, this.scope.namespace, { labelSelector: this.scope.labelSelector, fieldSelector: this.scope.fieldSelector });
    this.counts.lists++;
    const seen = new Map<string, unknown>();
    for (const item of page.items) {
      if (this.events.onDeleted) seen.set(objectKey(item), item);
      this.events.onObject(item, 'list');
    }
    if (this.events.onDeleted) {
      for (const [key, last] of this.known) if (!seen.has(key)) this.events.onDeleted(last, 'relist');
      this.known = seen;
    }
    this.resourceVersion = page.resourceVersion;
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async loop(): Promise<void> {
    const initial = this.options.initialBackoffMs ?? 500;
    const max = this.options.maxBackoffMs ?? 30_000;
    let backoff = initial;
    let mustList = true;
    let listedAt = 0;
    while (!this.stopped) {
      try {
        const relistDue = (this.options.relistEveryMs ?? 0) > 0 && Date.now() - listedAt >= (this.options.relistEveryMs ?? 0);
        if (mustList || relistDue) {
          await this.options.beforeList?.();
          if (this.stopped) break;
          await this.list();
          await this.options.afterList?.();
          listedAt = Date.now();
          mustList = false;
        }
        if (this.stopped) break;
        let delivered = false;
        const watchedAt = Date.now();
        this.handle = await this.api.watch(this.scope.resource, this.scope.namespace, { resourceVersion: this.resourceVersion, labelSelector: this.scope.labelSelector, fieldSelector: this.scope.fieldSelector }, (type: WatchEventType, object: unknown) => {
          const rv = (object as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion;
          if (type === 'ERROR') return;
          if (rv) this.resourceVersion = rv;
          delivered = true;
          if (type === 'ADDED' || type === 'MODIFIED') {
            if (this.events.onDeleted) this.known.set(objectKey(object), object);
            this.events.onObject(object, 'watch');
          } else if (type === 'DELETED' && this.events.onDeleted) {
            this.known.delete(objectKey(object));
            this.events.onDeleted(object, 'watch');
          }
        });
        this.counts.watches++;
        if (this.options.relistEveryMs) {
          // End the watch in time for the next resync list.
          const left = Math.max(0, this.options.relistEveryMs - (Date.now() - listedAt));
          const timer = setTimeout(() => this.handle?.stop(), left);
          await this.handle.done.finally(() => clearTimeout(timer));
        } else {
          await this.handle.done;
        }
        if (delivered) backoff = initial;
        if (!this.stopped) {
          this.counts.restarts++;
          this.events.onRestart?.('watch ended', false);
          // A watch that ends at once, having said nothing, must not become a busy loop.
          if (!delivered && Date.now() - watchedAt < 1_000) {
            await this.sleep(backoff);
            backoff = Math.min(max, backoff * 2);
          }
        }
      } catch (err) {
        if (this.stopped) break;
        this.counts.restarts++;
        if (isGone(err)) {
          // The version we would resume from is compacted away: list again, at once.
          mustList = true;
          this.events.onRestart?.('resourceVersion expired (410)', true);
          continue;
        }
        this.events.onRestart?.(err instanceof Error ? err.message : String(err), false);
        await this.sleep(backoff);
        backoff = Math.min(max, backoff * 2);
        // A list failed or a watch could not start: list again when the version is unknown.
        if (!this.resourceVersion) mustList = true;
      }
    }
  }
}
