/**
 * One resumable list+watch of one kind in one namespace, with the label selector sent to the API
 * server, as an informer does it: LIST (paginated) for the current state, then WATCH from the
 * list's resourceVersion with bookmarks on, resuming from the last version seen when the watch
 * ends (server close, the 30 s quiet cut of KubeApi.watch, a network error), and listing again when that
 * version is gone (410 Expired, after etcd compaction or an API server restart).
 *
 * The cluster can say no in many ways, and each is a reason to wait, not to ask again at once
 * (issue 20: 410 on every resume made 150-265 requests a second): 410 right after a relist, 5xx,
 * 429 (its Retry-After honoured), a watch that ends at once. The wait grows with the failures in
 * a row (backoff.ts) and resets only once a watch has lived (was held open by the server for
 * `healthyWatchMs`; a list that succeeds does not count, or a 410 on every resume would never
 * back off). The one exception is
 * the first 410 after a healthy watch: that is etcd compaction under a working watch, relisted at
 * once as before.
 *
 * A list is consumed a page at a time (memory holds one page; the event loop turns between pages,
 * so the lease is renewed and /healthz answers), and every object is matched against the scope
 * again (scope-filter.ts) before the caller sees it.
 */
import type { KubeApi, WatchEventType, WatchHandle } from '../../kube/api.js';
import { KubeActionError } from '../../kube/errors.js';
import type { ResourceRef } from '../../kube/resources.js';
import { backoffDelayMs, type BackoffPolicy } from './backoff.js';
import { scopeFilter, type RefusalReason } from './scope-filter.js';

export type { RefusalReason } from './scope-filter.js';

export interface ListWatchScope {
  cluster: string;
  resource: ResourceRef;
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Why a list is made: the first one, the version was gone (410), the periodic resync, or a failure left no version to resume from. */
export type ListReason = 'initial' | 'expired' | 'resync' | 'error';
/** Why the loop waits before asking again. */
export type BackoffReason = 'expired' | 'throttled' | 'server' | 'short_watch';

export interface ListWatchEvents {
  /**
   * Every object of a (re)list, then every ADDED or MODIFIED object of the watch, once it matched
   * the scope. May return a promise (the fact's queueing): a list awaits its page's promises before
   * it asks for the next page.
   */
  onObject(object: unknown, how: 'list' | 'watch'): unknown;
  /**
   * An object left the scope: deleted, or (with a label selector) its labels no longer match, which
   * the API server says as DELETED; or missing from a relist (its deletion fell in a gap). Only
   * scopes that pass this are tracked (the objects last seen are kept, so keep such scopes small).
   */
  onDeleted?(object: unknown, how: 'watch' | 'relist'): unknown;
  /** A watch ended and resumes from `resourceVersion` (`relist`: the version was gone, so it lists again). */
  onRestart?(reason: string, relist: boolean, error?: unknown): void;
  /** A list starts (after `beforeList`). */
  onList?(reason: ListReason): void;
  /** The loop waits `ms` before asking the API server again. */
  onBackoff?(ms: number, reason: BackoffReason): void;
  /** One object the API server sent was not the scope's and was dropped (for a counter). */
  onRefused?(reason: RefusalReason, how: 'list' | 'watch'): void;
  /**
   * What was refused during one list or one watch, once at its end (for one log line: a server
   * sending 50,000 strangers must not also write 50,000 lines of log).
   */
  onRefusedSummary?(counts: Partial<Record<RefusalReason, number>>, how: 'list' | 'watch'): void;
}

export interface ListWatchOptions {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A watch that lived this long is not a failure when it ends and resets the backoff (default
   * 5 s), quiet or not (most watches are quiet between releases): a server that sends one event
   * and hangs up at once cannot make a busy loop, at most two requests per this long.
   */
  healthyWatchMs?: number;
  /** List again this often even without a 410, as an informer's resync does (0: never). */
  relistEveryMs?: number;
  /** Awaited before every (re)list, before the API server is asked (list-order.ts: what lists first). */
  beforeList?: () => Promise<void> | void;
  /** Awaited after each page of a list was delivered (and its promises settled), before the next page is asked for. */
  afterPage?: () => Promise<void> | void;
  /** Awaited after a list delivered every object, before the watch starts. */
  afterList?: () => Promise<void> | void;
  /** For the jitter (tests). */
  random?: () => number;
}

function objectKey(object: unknown): string {
  const meta = (object as { metadata?: { namespace?: string; name?: string } } | null)?.metadata;
  return `${meta?.namespace ?? ''}/${meta?.name ?? ''}`;
}

function isGone(err: unknown): boolean {
  return err instanceof KubeActionError && err.status === 410;
}

/** One watch of the loop: when it started (one that lived resets the backoff). */
interface WatchRun {
  startedAt: number;
}

const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export class ListWatch {
  private stopped = false;
  private handle?: WatchHandle;
  private wake?: () => void;
  private resourceVersion = '';
  /** Objects last seen, by namespace/name (only when the caller hears deletions). */
  private known = new Map<string, unknown>();
  private running?: Promise<void>;
  private readonly refusesObject: (object: unknown) => RefusalReason | undefined;
  /** Refused since the last summary. */
  private refused = new Map<RefusalReason, number>();
  /** Counts, for metrics and tests. */
  readonly counts = { lists: 0, watches: 0, restarts: 0, refused: 0 };

  constructor(
    private readonly api: KubeApi,
    readonly scope: ListWatchScope,
    private readonly events: ListWatchEvents,
    private readonly options: ListWatchOptions = {},
  ) {
    this.refusesObject = scopeFilter(scope);
  }

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

  private refuse(reason: RefusalReason, how: 'list' | 'watch'): void {
    this.counts.refused++;
    this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
    this.events.onRefused?.(reason, how);
  }

  private reportRefused(how: 'list' | 'watch'): void {
    if (this.refused.size === 0) return;
    const counts = Object.fromEntries(this.refused) as Partial<Record<RefusalReason, number>>;
    this.refused = new Map();
    this.events.onRefusedSummary?.(counts, how);
  }

  /** One complete list, page by page; false when stopped part-way (nothing more is delivered). */
  private async list(): Promise<boolean> {
    const track = this.events.onDeleted !== undefined;
    const seen = new Map<string, unknown>();
    let resourceVersion = '';
    try {
      for await (const page of this.api.listPages(this.scope.resource, this.scope.namespace, { labelSelector: this.scope.labelSelector, fieldSelector: this.scope.fieldSelector })) {
        resourceVersion = page.resourceVersion;
        const queued: Promise<unknown>[] = [];
        for (const item of page.items) {
          const refused = this.refusesObject(item);
          if (refused) {
            this.refuse(refused, 'list');
            continue;
          }
          if (track) seen.set(objectKey(item), item);
          const delivered = this.events.onObject(item, 'list');
          if (delivered instanceof Promise) queued.push(delivered);
        }
        // Backpressure: this page's facts are queued before the next page is asked for.
        await Promise.allSettled(queued);
        await this.options.afterPage?.();
        // Timers and I/O (the lease renewal, /healthz) run between pages, even when pages come fast.
        await turn();
        if (this.stopped) return false;
      }
    } finally {
      this.reportRefused('list');
    }
    this.counts.lists++;
    if (track) {
      // Deletions are judged on the complete list only: a list that failed part-way says nothing of what is gone.
      const gone: Promise<unknown>[] = [];
      for (const [key, last] of this.known) {
        if (seen.has(key)) continue;
        const removed = this.events.onDeleted?.(last, 'relist');
        if (removed instanceof Promise) gone.push(removed);
      }
      this.known = seen;
      await Promise.allSettled(gone);
    }
    this.resourceVersion = resourceVersion;
    return true;
  }

  private onWatchEvent(type: WatchEventType, object: unknown): void {
    if (type === 'ERROR') return;
    const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
    // The stream's position moves on with every event, also one we refuse.
    if (typeof rv === 'string' && rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    if (type === 'ADDED' || type === 'MODIFIED') {
      const refused = this.refusesObject(object);
      if (refused) return this.refuse(refused, 'watch');
      if (this.events.onDeleted) this.known.set(objectKey(object), object);
      void this.events.onObject(object, 'watch');
    } else if (type === 'DELETED' && this.events.onDeleted) {
      // Not matched against the selector: an object relabelled out of it arrives as DELETED with
      // its new labels. Only an object this scope holds can leave it.
      const key = objectKey(object);
      if (!this.known.delete(key)) return;
      void this.events.onDeleted(object, 'watch');
    }
  }

  private async sleep(ms: number): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async pause(failures: number, policy: BackoffPolicy, reason: BackoffReason, retryAfterMs?: number): Promise<void> {
    const ms = backoffDelayMs(failures, policy, retryAfterMs, this.options.random);
    this.events.onBackoff?.(ms, reason);
    await this.sleep(ms);
  }

  private async loop(): Promise<void> {
    const policy: BackoffPolicy = { initialMs: this.options.initialBackoffMs ?? 500, maxMs: this.options.maxBackoffMs ?? 30_000 };
    const healthyMs = this.options.healthyWatchMs ?? 5_000;
    const every = this.options.relistEveryMs ?? 0;
    /** Failures in a row since a watch last lived. */
    let failures = 0;
    let listReason: ListReason | undefined = 'initial';
    let listedAt = 0;
    while (!this.stopped) {
      let run: WatchRun | undefined;
      try {
        if (listReason === undefined && every > 0 && Date.now() - listedAt >= every) listReason = 'resync';
        if (listReason !== undefined) {
          await this.options.beforeList?.();
          if (this.stopped) break;
          this.events.onList?.(listReason);
          if (!(await this.list())) break;
          await this.options.afterList?.();
          listedAt = Date.now();
          listReason = undefined;
        }
        if (this.stopped) break;
        const current: WatchRun = (run = { startedAt: Date.now() });
        this.handle = await this.api.watch(this.scope.resource, this.scope.namespace, { resourceVersion: this.resourceVersion, labelSelector: this.scope.labelSelector, fieldSelector: this.scope.fieldSelector }, (type, object) => this.onWatchEvent(type, object));
        this.counts.watches++;
        // stop() may have come while the watch was being opened, before there was a handle to stop.
        if (this.stopped) this.handle.stop();
        let resyncCut = false;
        if (every > 0) {
          // End the watch in time for the next resync list.
          const left = Math.max(0, every - (Date.now() - listedAt));
          const timer = setTimeout(() => {
            resyncCut = true;
            this.handle?.stop();
          }, left);
          await this.handle.done.finally(() => clearTimeout(timer));
        } else {
          await this.handle.done;
        }
        this.reportRefused('watch');
        if (this.stopped) break;
        this.counts.restarts++;
        this.events.onRestart?.('watch ended', false);
        // A watch the server held open for a while is a server behaving again, quiet or not (a
        // quiet one is most watches between releases): the failures before it are forgotten.
        const lived = Date.now() - current.startedAt >= healthyMs;
        if (lived) failures = 0;
        // A watch that lived (a quiet one cut by client-node, the resync) resumes at once; one that
        // ended at once, whatever it said, counts as a failure: that is how a busy loop starts.
        if (lived || resyncCut) continue;
        failures++;
        await this.pause(failures, policy, 'short_watch');
      } catch (err) {
        if (run) this.reportRefused('watch');
        if (this.stopped) break;
        this.counts.restarts++;
        const healthy = run !== undefined && Date.now() - run.startedAt >= healthyMs;
        if (healthy) failures = 0;
        if (isGone(err)) {
          // The version we would resume from is compacted away: list again. After a healthy watch
          // at once; right after a relist (410 on every resume) it is a loop, and waits.
          listReason = 'expired';
          this.events.onRestart?.('resourceVersion expired (410)', true);
          if (healthy) continue;
          failures++;
          await this.pause(failures, policy, 'expired');
          continue;
        }
        this.events.onRestart?.(err instanceof Error ? err.message : String(err), false, err);
        failures++;
        const kube = err instanceof KubeActionError ? err : undefined;
        await this.pause(failures, policy, kube?.status === 429 ? 'throttled' : 'server', kube?.retryAfterMs);
        // A list failed or a watch could not start: list again when the version is unknown.
        if (!this.resourceVersion) listReason ??= 'error';
      }
    }
  }
}
