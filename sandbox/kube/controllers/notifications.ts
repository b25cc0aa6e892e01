/**
 * Notifications engine simulator, for the Rollouts controller and for Argo CD's notifications
 * controller. It runs Glidepath's own config (deploy/notifications/): the subscriptions with their
 * label selectors, and every trigger's `when`/`oncePer` (triggers.ts), evaluated on the fresh object
 * at every change and at every resync, with notified-state where notifications-engine keeps it: the
 * object's `notified.notifications.argoproj.io` annotation (notified-state.ts), so it grows under
 * heartbeats exactly as on a real cluster, and removing it makes the engine send current state again.
 * Bodies are Glidepath's fact bodies (fact-bodies.ts), POSTed with the Bearer token.
 *
 * Fault switches (all off by default):
 * - `staleFacts`: the controller's event path is also wired to our templates, so every event sends
 *   the object as read before the reconcile: observedGeneration one behind, old pod hash and phase.
 * - `receiverDown`: the fact is lost silently; it is never redelivered.
 * - `duplicateDeliveries`: extra copies of every delivery, as two controller replicas sent.
 * A receiver that answers 5xx or cannot be reached is retried (3 times, 1 s apart on the clock);
 * after that the notified-state is reset, so the next change or resync may send it again, as upstream.
 */
import type { Clock, TimerHandle } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import { matchesSelectors, parseLabels } from '../selectors.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import { applicationFactBody, rolloutFactBody } from './fact-bodies.js';
import { ARGOCD_CONFIG_FILE, loadNotificationConfig, ROLLOUTS_CONFIG_FILE, type Subscription } from './notification-config.js';
import type { RolloutEvent, RolloutsController } from './rollouts.js';
import { notifiedKey, readNotified, writeNotified } from './notified-state.js';
import { APPLICATION_TRIGGERS, EVENT_PATH_TRIGGERS, ROLLOUT_TRIGGERS, type TriggerDefinition } from './triggers.js';

/** Glidepath's subscriptions name the bare `glidepath` webhook service: service `glidepath`, no recipient. */
const DESTINATION = 'glidepath:';

export interface NotificationFaults {
  staleFacts: boolean;
  receiverDown: boolean;
  duplicateDeliveries: number;
}

export type NotifiedKind = 'rollout' | 'application';

export interface NotificationsEngineOptions {
  kind: NotifiedKind;
  store: ObjectStore;
  clock: Clock;
  webhook: { url: string; token: string; retryMax?: number; retryWaitMs?: number };
  /** Event-path source for the staleFacts fault (Rollouts only). */
  rollouts?: RolloutsController;
  /** Default: the subscriptions of Glidepath's ConfigMap for this kind. */
  subscriptions?: Subscription[];
  /** Namespaces this instance watches (Argo CD: its application namespaces; default all). */
  namespaces?: string[];
  /** Parallel deliveries across objects (default 10, the Rollouts controller's worker count); one object's are in order. */
  concurrency?: number;
  /** Informer resync: every object is evaluated again (default 15 min); heartbeats ride on it. */
  resyncEveryMs?: number;
  faults?: Partial<NotificationFaults>;
}

export interface DeliveryRecord {
  event: string;
  namespace?: string;
  name: string;
  outcome: 'delivered' | 'failed' | 'lost' | 'pending';
  status?: number;
  body: unknown;
}

export class NotificationsEngine {
  readonly faults: NotificationFaults;
  readonly deliveries: DeliveryRecord[] = [];
  private readonly subscriptions: Subscription[];
  /** Each subscription's label selector, parsed once. */
  private readonly selectors: { selector: ReturnType<typeof parseLabels>; triggers: string[] }[];
  private readonly definitions: Record<string, TriggerDefinition>;
  private readonly rt: ResourceType;
  /** Each trigger's `when` text, hashed into its notified keys as the engine does. */
  private readonly conditions: Record<string, string>;
  /** Deliveries in order per object; objects proceed in parallel up to `concurrency`, like the controller's workers. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly unsubscribers: (() => void)[] = [];
  private resyncTimer?: TimerHandle;
  private stopped = false;
  /** Set while this engine writes a reset of its own state, which it does not process again at once. */
  private quiet = false;

  constructor(private readonly options: NotificationsEngineOptions) {
    this.faults = { staleFacts: false, receiverDown: false, duplicateDeliveries: 0, ...options.faults };
    const rollouts = options.kind === 'rollout';
    this.definitions = rollouts ? ROLLOUT_TRIGGERS : APPLICATION_TRIGGERS;
    const config = loadNotificationConfig(rollouts ? ROLLOUTS_CONFIG_FILE : ARGOCD_CONFIG_FILE);
    this.subscriptions = options.subscriptions ?? config.subscriptions;
    this.conditions = config.conditions;
    for (const s of this.subscriptions) {
      for (const t of s.triggers) if (!this.definitions[t]) throw new Error(`notifications simulator has no definition for trigger "${t}"`);
    }
    this.selectors = this.subscriptions.map((s) => ({ selector: parseLabels(s.selector), triggers: s.triggers }));
    this.rt = options.store.registry.byKind(rollouts ? 'Rollout' : 'Application', 'argoproj.io');
  }

  start(): this {
    this.unsubscribers.push(this.options.store.subscribe((e) => this.onStoreEvent(e)));
    if (this.options.rollouts) this.unsubscribers.push(this.options.rollouts.onEvent((e) => this.onControllerEvent(e)));
    this.scheduleResync();
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribers) u();
    this.resyncTimer?.cancel();
  }

  /** Resolves once every queued delivery has been attempted. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private async slot<T>(work: () => Promise<T>): Promise<T> {
    const limit = this.options.concurrency ?? 10;
    if (this.active >= limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** Evaluates every watched object now, as an informer resync does. */
  resync(): void {
    for (const obj of this.options.store.list(this.rt, undefined).items) this.evaluate(obj);
  }

  private watched(obj: KubeObject): boolean {
    const ns = this.options.namespaces;
    return !ns || ns.includes(obj.metadata.namespace ?? '');
  }

  private triggersFor(obj: KubeObject): string[] {
    return [...new Set(this.selectors.filter((s) => matchesSelectors(obj, s.selector, [])).flatMap((s) => s.triggers))];
  }

  private onStoreEvent(e: StoreEvent): void {
    if (e.rt !== this.rt || !this.watched(e.object) || e.type === 'DELETED' || this.quiet) return;
    this.evaluate(e.object);
  }

  private evaluate(obj: KubeObject): void {
    const now = this.options.clock.now();
    const state = readNotified(obj);
    const added = new Map<string, number>();
    const removed = new Set<string>();
    const sends: { trigger: string; key: string }[] = [];
    for (const trigger of this.triggersFor(obj)) {
      const def = this.definitions[trigger]!;
      const when = this.conditions[trigger] ?? trigger;
      if (!def.when(obj, now)) {
        // oncePer keys stay forever; a plain condition re-arms when it turns false.
        const plain = notifiedKey(trigger, when, DESTINATION);
        if (!def.oncePer && state.has(plain)) removed.add(plain);
        continue;
      }
      const key = notifiedKey(trigger, when, DESTINATION, def.oncePer?.(obj, now));
      if (state.has(key)) continue;
      added.set(key, Math.floor(now / 1000));
      sends.push({ trigger, key });
    }
    // Persisted before sending, as the engine does; the write re-enters evaluate, which then finds every key.
    if (added.size > 0 || removed.size > 0) this.persist(obj, (s) => {
      for (const [k, at] of added) s.set(k, at);
      for (const k of removed) s.delete(k);
    });
    // A failed send forgets its key, as the engine does, without being processed again at once: the
    // engine retries at the object's next change or resync, not in a loop.
    for (const { trigger, key } of sends) this.send(trigger, obj, () => this.persist(obj, (s) => s.delete(key), { quiet: true }));
  }

  /** Applies a change to the notified annotation of the object as it is now (gone: nothing to do). */
  private persist(obj: KubeObject, change: (state: Map<string, number>) => void, options: { quiet?: boolean } = {}): void {
    const { namespace, name } = obj.metadata;
    if (this.stopped || !this.options.store.tryGet(this.rt, namespace, name ?? '')) return;
    this.quiet = options.quiet ?? false;
    try {
      this.options.store.mutate(this.rt, namespace, name ?? '', (current) => {
        const state = readNotified(current);
        change(state);
        writeNotified(current, state);
      });
    } finally {
      this.quiet = false;
    }
  }

  private onControllerEvent(e: RolloutEvent): void {
    if (!this.faults.staleFacts || !this.watched(e.before)) return;
    const trigger = EVENT_PATH_TRIGGERS[e.reason];
    if (trigger && this.triggersFor(e.before).includes(trigger)) this.send(trigger, e.before, () => undefined);
  }

  private scheduleResync(): void {
    if (this.stopped) return;
    this.resyncTimer = this.options.clock.setTimer(this.options.resyncEveryMs ?? 15 * 60_000, () => {
      this.resync();
      this.scheduleResync();
    });
  }

  private send(trigger: string, obj: KubeObject, onFailure: () => void): void {
    if (this.stopped) return;
    const now = this.options.clock.now();
    const body = this.options.kind === 'rollout' ? rolloutFactBody(trigger, now, obj) : applicationFactBody(trigger, now, obj);
    const copies = 1 + Math.max(0, this.faults.duplicateDeliveries);
    const receiverDown = this.faults.receiverDown;
    for (let i = 0; i < copies; i++) {
      const record: DeliveryRecord = { event: trigger, namespace: obj.metadata.namespace, name: obj.metadata.name, outcome: 'pending', body };
      this.deliveries.push(record);
      const key = obj.metadata.uid ?? `${obj.metadata.namespace}/${obj.metadata.name}`;
      const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.slot(() => this.deliver(record, receiverDown, onFailure)));
      this.chains.set(key, next);
      this.inFlight.add(next);
      void next.finally(() => {
        this.inFlight.delete(next);
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    }
  }

  private async deliver(record: DeliveryRecord, receiverDown: boolean, onFailure: () => void): Promise<void> {
    if (receiverDown) {
      record.outcome = 'lost';
      return;
    }
    const { url, token, retryMax = 3, retryWaitMs = 1000 } = this.options.webhook;
    for (let attempt = 0; attempt <= retryMax; attempt++) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify(record.body),
        });
        await res.arrayBuffer();
        record.status = res.status;
        if (res.status < 500) {
          record.outcome = res.status < 300 ? 'delivered' : 'failed';
          if (res.status >= 300) onFailure();
          return;
        }
      } catch {
        // connection refused or reset: retried like go-retryablehttp
      }
      if (attempt < retryMax) await new Promise<void>((resolve) => this.options.clock.setTimer(retryWaitMs, resolve));
    }
    record.outcome = 'failed';
    onFailure();
  }
}
