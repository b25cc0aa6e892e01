/**
 * Facts from the cluster itself (beside the notification webhooks, or instead of them): for each
 * cluster whose config says `facts: watch` or `both`, one replica at a time (a Redis lease per
 * cluster) lists and watches what the pipelines select, turns every object it sees into the same
 * normalised fact a webhook would carry (same schema, same normaliser, the same identity for the
 * same observation, so a change seen both ways is one job), and queues it.
 *
 * A list is level-triggered state: it is sent as `watch-resync`, which the fact identity treats as
 * a heartbeat (a new job each time), so a quiet release is still heard from and no stall is raised
 * for silence that is only the absence of change. The source relists every `watchResyncMinutes`.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ConfigFile } from '../../config/file.js';
import type { ClusterClients } from '../../kube/clusters.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { Keys } from '../../store/keys.js';
import type { Fact } from '../fact.js';
import type { FactQueue } from '../fact-queue.js';
import { normaliseApplication, normaliseApplicationSet, normaliseRollout } from '../normalise.js';
import { applicationFactBody, applicationSetFactBody, rolloutFactBody } from '../schemas.js';
import { invalid, isKargoScope, KargoDirectory, kargoFactFromObject, type RejectedObject } from './kargo-watch.js';
import { LogLimiter } from '../../obs/log-limit.js';
import { kargoFactFollowed } from '../../routing/route-kargo.js';
import { RedisLease } from '../../store/lease.js';
import { KubeActionError } from '../../kube/errors.js';
import { WATCH_DELETED_EVENT, WATCH_EVENT, WATCH_RESYNC_EVENT } from '../identity.js';
import { ListWatch } from './list-watch.js';
import { ListOrder, listRole } from './list-order.js';
import { isGeneratorScope, watchedClusters, watchScopes, type WatchScope } from './scopes.js';
import { catalogOf } from '../../routing/catalog.js';
import { objectMetaSchema } from '../../model/meta.js';

/** The scopes as one string, to compare. */
function scopesKey(scopes: readonly WatchScope[]): string {
  return JSON.stringify(scopes.map((s) => [s.resource.plural, s.namespace, s.labelSelector ?? '', s.fieldSelector ?? '', s.ownedBy ?? []]));
}

/** What a deletion needs of the object: which one, and which version was last seen. */
const goneObjectMeta = objectMetaSchema.pick({ namespace: true, name: true, uid: true, resourceVersion: true });


export interface WatchSourceOptions {
  config: ConfigFile;
  clusters: () => ClusterClients;
  facts: FactQueue;
  redis: Redis;
  keys: Keys;
  logger: Logger;
  metrics: Metrics;
  /** Which replica this is, for the lease (default: random). */
  holder?: string;
  now?: () => number;
  /** How long the Applications of a namespace wait for its ApplicationSets' list to be queued (list-order.ts; default 5 s). */
  listOrderWaitMs?: number;
}

/**
 * The fact an object of a scope becomes, the reason it cannot be one, or undefined when the scope
 * does not track it (Kargo objects: see kargo-watch.ts).
 */
export function factFromObject(scope: WatchScope, cluster: string, object: unknown, event: string, receivedAt: number, kargo = new KargoDirectory()): Fact | RejectedObject | undefined {
  if (isKargoScope(scope)) return kargoFactFromObject(scope, cluster, object, event, receivedAt, kargo);
  const sentAt = Math.floor(receivedAt / 1000);
  if (scope.resource.kind === 'Rollout') {
    const body = rolloutFactBody.safeParse({ event, sentAt, rollout: object });
    if (!body.success) return invalid(body.error.issues);
    return normaliseRollout(body.data, cluster, receivedAt, 'watch');
  }
  if (scope.resource.kind === 'ApplicationSet') {
    const body = applicationSetFactBody.safeParse({ event, sentAt, applicationSet: object });
    if (!body.success) return invalid(body.error.issues);
    return normaliseApplicationSet(body.data, cluster, receivedAt, 'watch');
  }
  const body = applicationFactBody.safeParse({ event, sentAt, application: object });
  if (!body.success) return invalid(body.error.issues);
  const fact = normaliseApplication(body.data, cluster, receivedAt, 'watch');
  // Children of the named ApplicationSets only: the API server cannot select by owner.
  if (scope.ownedBy && !(fact.application.appSet !== undefined && scope.ownedBy.includes(fact.application.appSet))) return undefined;
  return fact;
}

class ClusterWatch {
  private readonly watches: ListWatch[] = [];
  private order?: ListOrder;
  readonly lease: RedisLease;
  /** While the lease is held but the cluster's client cannot be configured yet (a kubeconfig not mounted yet): the next try. */
  private retry?: NodeJS.Timeout;
  private configureFailures = 0;
  /** "Not a valid fact" warnings, once a minute per scope. */
  private readonly invalidLog = new LogLimiter(60_000);
  /** When this cluster's watches listed again (not the first lists), within the last watchRelistWarn.minutes. */
  private relists: number[] = [];
  private relistWarnedAt = Number.NEGATIVE_INFINITY;
  /** The scopes the running watches list (scopesKey), to tell whether a reloaded config changed them. */
  private scopesKey?: string;

  constructor(
    private readonly cluster: string,
    private readonly o: WatchSourceOptions,
    holder: string,
  ) {
    const ttlMs = o.config.settings.watchLeaseSeconds * 1000;
    this.lease = new RedisLease(o.redis, o.keys.watchLease(cluster), holder, ttlMs, {
      acquired: () => this.begin(),
      lost: () => void this.end(),
    }, { epochKey: o.keys.watchLeaseEpoch(cluster), logger: o.logger, what: { cluster, lease: 'watch' } });
  }

  private begin(): void {
    if (this.configureFailures === 0) this.o.logger.info({ cluster: this.cluster }, 'watching the cluster (lease held)');
    this.o.metrics.watchLeaseHeld.set({ cluster: this.cluster }, 1);
    let api;
    try {
      api = this.o.clusters().api(this.cluster);
    } catch (err) {
      // Not for ever: a kubeconfig Secret mounted late, or written by whoever starts the cluster
      // after us, is found on a later try (1 s, doubling, at most a minute) while the lease is held.
      const delayMs = Math.min(60_000, 1000 * 2 ** Math.min(this.configureFailures, 6));
      this.configureFailures += 1;
      const log = this.configureFailures === 1 ? this.o.logger.warn.bind(this.o.logger) : this.o.logger.debug.bind(this.o.logger);
      log({ cluster: this.cluster, err: (err as Error).message, retryInMs: delayMs }, 'cannot watch the cluster yet: its client cannot be configured');
      this.o.metrics.watchRestarts.inc({ cluster: this.cluster, kind: 'client', relist: 'false' });
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.begin();
      }, delayMs);
      this.retry.unref();
      return;
    }
    this.configureFailures = 0;
    const now = this.o.now ?? Date.now;
    // What this cluster's watches know of its Kargo projects (Stage labels, Freight), for Promotion facts.
    const kargo = new KargoDirectory();
    const scopes = watchScopes(this.o.config, this.cluster);
    this.scopesKey = scopesKey(scopes);
    // The ApplicationSets' lists are queued before their children's start (list-order.ts).
    const order = (this.order = new ListOrder(this.o.listOrderWaitMs ?? 5_000));
    for (const scope of scopes) {
      const role = listRole(scope, scopes);
      if (role !== undefined && role !== 'follower') order.listDue(role.leader);
    }
    for (const scope of scopes) {
      const labels = { cluster: this.cluster, kind: scope.resource.kind };
      const role = listRole(scope, scopes);
      const scopeKey = `${scope.resource.plural}|${scope.namespace}|${scope.labelSelector ?? ''}|${scope.fieldSelector ?? ''}`;
      /** The fact's queueing, or undefined when the object becomes no fact (a list awaits a page's queueing before its next page). */
      const deliver = (object: unknown, how: 'list' | 'watch' | 'deleted'): Promise<void> | undefined => {
        // A replica that woke after its lease ran out (paused, starved) queues nothing it heard
        // meanwhile: the lease's new holder lists the cluster afresh, and these events are old.
        if (!this.lease.isHeld) {
          this.o.metrics.fencedWrites.inc({ what: 'watch_fact' });
          return undefined;
        }
        const receivedAt = now();
        const event = how === 'list' ? WATCH_RESYNC_EVENT : how === 'deleted' ? WATCH_DELETED_EVENT : WATCH_EVENT;
        const fact = how === 'deleted' ? kargoFactFromObject(scope, this.cluster, object, event, receivedAt, kargo, true) : factFromObject(scope, this.cluster, object, event, receivedAt, kargo);
        if (fact === undefined) return undefined;
        if ('rejected' in fact) {
          this.o.metrics.factsRejected.inc({ source: 'watch', reason: 'invalid_object' });
          // A warning (an object of the wrong kind or shape on this path is the cluster misbehaving),
          // but once a minute per scope with a count: a cluster can send thousands.
          const count = this.invalidLog.take(scopeKey);
          if (count !== undefined) this.o.logger.warn({ ...labels, namespace: scope.namespace, reason: fact.rejected, path: fact.path, count }, 'watched object is not a valid fact');
          return undefined;
        }
        // Kargo: only what a pipeline stage follows (name patterns are matched here, not by the API server).
        if ((fact.kind === 'kargo-stage' || fact.kind === 'kargo-promotion' || fact.kind === 'kargo-freight') && !kargoFactFollowed(this.o.config, fact)) return undefined;
        this.o.metrics.factsReceived.inc({ source: 'watch' });
        this.o.metrics.watchEvents.inc({ ...labels, how });
        const queued = this.o.facts.add(fact).then(
          () => {
            this.o.metrics.factsAccepted.inc({ source: 'watch' });
            this.o.metrics.watchLag.observe(labels, (now() - receivedAt) / 1000);
          },
          (err: unknown) => {
            // Lost here, found again: the next list (410 or resync) sends the current state.
            this.o.metrics.factsRejected.inc({ source: 'watch', reason: 'queue_unavailable' });
            this.o.logger.warn({ ...labels, err: (err as Error).message }, 'a watched fact could not be queued');
          },
        );
        return queued;
      };
      const watch = new ListWatch(
        api,
        { cluster: this.cluster, ...scope },
        {
          onObject: deliver,
          // A Stage that leaves stops counting at once: DELETED, and missing from a relist.
          ...(scope.resource.kind === 'Stage' ? { onDeleted: (object: unknown) => deliver(object, 'deleted') } : {}),
          // A template's Rollout or Application that leaves: its group may retire (src/routing/catalog.ts).
          ...(isGeneratorScope(this.o.config, this.cluster, scope) ? { onDeleted: (object: unknown) => this.forgetGenerated(scope, object) } : {}),
          onRestart: (reason, relist, error) => {
            this.o.metrics.watchRestarts.inc({ ...labels, relist: String(relist) });
            if (error instanceof KubeActionError && error.kind === 'line-too-long') {
              // The API server (or something in front of it) is misbehaving: said, counted, and backed off.
              this.o.metrics.watchStreamsCut.inc({ ...labels, reason: 'line_too_long' });
              this.o.logger.warn({ ...labels, namespace: scope.namespace, reason }, 'a watch stream sent a line over the cap; the watch was ended and resumes after a backoff');
            } else this.o.logger.debug({ ...labels, reason, relist }, 'watch restarts');
          },
          onList: (reason) => {
            this.o.metrics.watchRelists.inc({ ...labels, reason });
            if (reason !== 'initial') this.noteRelist();
          },
          onBackoff: (ms, reason) => this.o.metrics.watchBackoffSeconds.inc({ ...labels, reason }, ms / 1000),
          onRefused: (reason) => this.o.metrics.factsRejected.inc({ source: 'watch', reason }),
          // One line per list or watch, with the counts: the API server did not apply the selectors it was sent.
          onRefusedSummary: (refused, how) => this.o.logger.warn({ ...labels, namespace: scope.namespace, labelSelector: scope.labelSelector, fieldSelector: scope.fieldSelector, how, refused }, 'the API server sent objects outside the watched scope; they were refused'),
        },
        {
          relistEveryMs: this.o.config.settings.watchResyncMinutes * 60_000,
          ...(role === 'follower' ? { beforeList: () => order.ready() } : {}),
          ...(role !== undefined && role !== 'follower'
            ? {
                beforeList: () => order.listDue(role.leader),
                // ListWatch runs this once every page's facts are queued (it awaits each page's deliveries).
                afterList: () => order.listQueued(role.leader),
              }
            : {}),
        },
      ).start();
      this.watches.push(watch);
    }
  }

  /** A generator's object gone from its scope (deleted, relabelled out, missing from a relist): it leaves its group. */
  private forgetGenerated(scope: WatchScope, object: unknown): void {
    const meta = goneObjectMeta.safeParse((object as { metadata?: unknown } | null)?.metadata);
    if (!meta.success || !this.lease.isHeld) return;
    const kind = scope.resource.kind === 'Rollout' ? 'Rollout' : 'Application';
    this.o.metrics.watchEvents.inc({ cluster: this.cluster, kind, how: 'deleted' });
    catalogOf(this.o.config)?.forget({ kind, cluster: this.cluster, namespace: meta.data.namespace, name: meta.data.name, ...(meta.data.uid ? { uid: meta.data.uid } : {}), ...(meta.data.resourceVersion ? { resourceVersion: meta.data.resourceVersion } : {}) });
  }

  /** A relist of any of the cluster's scopes: a warning when there are too many in the window (a 410 loop, a flapping API server). */
  private noteRelist(): void {
    const { count, minutes } = this.o.config.settings.watchRelistWarn;
    const windowMs = minutes * 60_000;
    const at = Date.now();
    this.relists.push(at);
    while (this.relists.length > 0 && this.relists[0]! <= at - windowMs) this.relists.shift();
    if (this.relists.length <= count || at - this.relistWarnedAt < windowMs) return;
    this.relistWarnedAt = at;
    this.o.logger.warn({ cluster: this.cluster, relists: this.relists.length, minutes }, 'the cluster\'s watches keep listing again (410 or failures): check its API server');
  }

  /** The config was reloaded: while the lease is held and the cluster's scopes changed, the watches stop and list again with the new ones. */
  async rescope(): Promise<void> {
    if (!this.lease.isHeld || this.scopesKey === undefined || this.scopesKey === scopesKey(watchScopes(this.o.config, this.cluster))) return;
    this.o.logger.info({ cluster: this.cluster }, 'the reloaded config watches other objects on the cluster: its watches list again');
    await this.end();
    if (this.lease.isHeld) this.begin();
  }

  /** Stops for good (shutdown): the lease is handed over (or left to expire) and the watches stop. */
  async close(options: { release?: boolean }): Promise<void> {
    await this.lease.stop(options);
    await this.end();
  }

  async end(): Promise<void> {
    this.o.metrics.watchLeaseHeld.set({ cluster: this.cluster }, 0);
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    this.order?.close();
    const watches = this.watches.splice(0);
    await Promise.all(watches.map((w) => w.stop()));
    if (watches.length > 0) this.o.logger.info({ cluster: this.cluster }, 'stopped watching the cluster');
  }

  /** Lists made so far, and how many of the scopes have listed and opened their watch, for tests and benchmarks. */
  counts(): WatchCounts {
    const counts: WatchCounts = { lists: 0, restarts: 0, scopes: this.watches.length, watching: 0 };
    for (const w of this.watches) {
      counts.lists += w.counts.lists;
      counts.restarts += w.counts.restarts;
      if (w.counts.watches > 0) counts.watching += 1;
    }
    return counts;
  }
}

/** A cluster's watch: lists made, restarts, its scopes, and those that listed and opened a watch at least once. */
export interface WatchCounts {
  lists: number;
  restarts: number;
  scopes: number;
  watching: number;
}

export class WatchSource {
  private readonly byCluster = new Map<string, ClusterWatch>();
  private readonly holder: string;

  constructor(private readonly options: WatchSourceOptions) {
    this.holder = options.holder ?? `${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  start(): this {
    for (const cluster of watchedClusters(this.options.config)) this.watch(cluster);
    return this;
  }

  private watch(cluster: string): void {
    const watch = new ClusterWatch(cluster, this.options, this.holder);
    this.byCluster.set(cluster, watch);
    watch.lease.start();
  }

  /**
   * The config was reloaded (src/wiring/config-reload.ts): a cluster now watched starts (by its
   * lease), one no longer watched stops and hands its lease over, and one whose pipelines or
   * templates select other objects lists again with the new scopes.
   */
  async reconfigure(): Promise<void> {
    const wanted = new Set(watchedClusters(this.options.config));
    for (const [cluster, watch] of [...this.byCluster]) {
      if (wanted.has(cluster)) continue;
      this.byCluster.delete(cluster);
      await watch.close({ release: true });
    }
    for (const cluster of wanted) {
      const running = this.byCluster.get(cluster);
      if (running) await running.rescope();
      else this.watch(cluster);
    }
  }

  /** Clusters this replica watches now. */
  held(): string[] {
    return [...this.byCluster].filter(([, w]) => w.lease.isHeld).map(([c]) => c);
  }

  counts(cluster: string): WatchCounts {
    return this.byCluster.get(cluster)?.counts() ?? { lists: 0, restarts: 0, scopes: 0, watching: 0 };
  }

  /** Stops watching; `release: false` leaves the leases to expire (as a crashed replica would). */
  async close(options: { release?: boolean } = {}): Promise<void> {
    await Promise.all([...this.byCluster.values()].map((w) => w.close(options)));
  }
}
