/**
 * Notifications engine simulator (the one inside the Rollouts controller, and Argo CD's
 * notifications controller): POSTs Glidepath's fact bodies to a webhook with a Bearer token.
 *
 * - Event path: every event the Rollouts controller records with a subscribed trigger is sent with
 *   the object as read at the start of that reconcile (stale: argo-rollouts#3535) unless the
 *   `stalePayloads` fault switch is turned off.
 * - Change path: a `when`-trigger evaluated on the fresh object at every Rollout change.
 * - Heartbeats: the current state of every subscribed Rollout every N (on the clock).
 * - Argo CD: an Application whose operation ends Failed/Error (once per operation).
 *
 * Delivery is at most once: a receiver that is down (or keeps answering 5xx after the retries)
 * loses the fact silently; the `duplicateDeliveries` switch sends copies, as two controller pods did.
 */
import type { Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import { parseLabels, matchesSelectors } from '../selectors.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import { applicationFactBody, rolloutFactBody } from './fact-bodies.js';
import type { RolloutEvent, RolloutsController } from './rollouts.js';

export interface NotificationFaults {
  /** Event-path facts carry the pre-reconcile object (true = upstream behaviour). */
  stalePayloads: boolean;
  /** The receiver is unreachable: facts are lost, with no redelivery. */
  receiverDown: boolean;
  /** Extra copies of every delivery. */
  duplicateDeliveries: number;
}

export interface NotificationTriggers {
  /** Rollouts event reason → trigger name; reasons not listed are not subscribed. */
  rolloutEvents: Record<string, string>;
  /** Trigger fired with the fresh object on every Rollout status or generation change (null = off). */
  rolloutChanged: string | null;
  heartbeat: string;
  /** Trigger for an Application operation that ended Failed or Error (null = off). */
  applicationSyncFailed: string | null;
  /** Trigger fired on every Application change (null = off). */
  applicationChanged: string | null;
}

export const DEFAULT_TRIGGERS: NotificationTriggers = {
  rolloutEvents: {
    RolloutUpdated: 'on-glidepath-rollout-updated',
    RolloutStepCompleted: 'on-glidepath-rollout-step-completed',
    RolloutPaused: 'on-glidepath-rollout-paused',
    RolloutResumed: 'on-glidepath-rollout-resumed',
    RolloutAborted: 'on-glidepath-rollout-aborted',
    RolloutCompleted: 'on-glidepath-rollout-completed',
  },
  rolloutChanged: 'on-glidepath-rollout-changed',
  heartbeat: 'on-glidepath-heartbeat',
  applicationSyncFailed: 'on-glidepath-sync-failed',
  applicationChanged: null,
};

export interface NotificationsEngineOptions {
  store: ObjectStore;
  clock: Clock;
  webhook: { url: string; token: string; retryMax?: number; retryWaitMs?: number };
  /** Source of event-path notifications. */
  rollouts?: RolloutsController;
  triggers?: Partial<NotificationTriggers>;
  /** Label selector of the Rollouts subscribed (default: all). */
  rolloutSelector?: string;
  /** Namespaces whose Applications this Argo CD instance notifies about (default: all). */
  applicationNamespaces?: string[];
  /** 0 = no heartbeats. */
  heartbeatEveryMs?: number;
  faults?: Partial<NotificationFaults>;
}

export interface DeliveryRecord {
  event: string;
  kind: 'rollout' | 'application';
  namespace?: string;
  name: string;
  outcome: 'delivered' | 'lost';
  status?: number;
  body: unknown;
}

export class NotificationsEngine {
  readonly faults: NotificationFaults;
  readonly triggers: NotificationTriggers;
  readonly deliveries: DeliveryRecord[] = [];
  private chain: Promise<void> = Promise.resolve();
  private readonly unsubscribers: (() => void)[] = [];
  private heartbeatTimer?: { cancel(): void };
  private readonly rolloutRt: ResourceType;
  private readonly appRt: ResourceType;
  private readonly notifiedOperations = new Set<string>();
  private stopped = false;

  constructor(private readonly options: NotificationsEngineOptions) {
    this.faults = { stalePayloads: true, receiverDown: false, duplicateDeliveries: 0, ...options.faults };
    this.triggers = { ...DEFAULT_TRIGGERS, ...options.triggers };
    this.rolloutRt = options.store.registry.byKind('Rollout', 'argoproj.io');
    this.appRt = options.store.registry.byKind('Application', 'argoproj.io');
  }

  start(): this {
    const { store, rollouts } = this.options;
    if (rollouts) this.unsubscribers.push(rollouts.onEvent((e) => this.onRolloutEvent(e)));
    this.unsubscribers.push(store.subscribe((e) => this.onStoreEvent(e)));
    this.scheduleHeartbeat();
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribers) u();
    this.heartbeatTimer?.cancel();
  }

  /** Resolves when every queued delivery has been attempted. */
  async idle(): Promise<void> {
    let current: Promise<void>;
    do {
      current = this.chain;
      await current;
    } while (current !== this.chain);
  }

  private subscribed(rollout: KubeObject): boolean {
    return matchesSelectors(rollout, parseLabels(this.options.rolloutSelector), []);
  }

  private onRolloutEvent(e: RolloutEvent): void {
    const trigger = this.triggers.rolloutEvents[e.reason];
    if (!trigger || !this.subscribed(e.after)) return;
    const obj = this.faults.stalePayloads ? e.before : e.after;
    this.enqueue('rollout', trigger, obj, rolloutFactBody(trigger, this.options.clock.now(), obj));
  }

  private onStoreEvent(e: StoreEvent): void {
    if (e.type === 'DELETED') return;
    if (e.rt === this.rolloutRt && this.triggers.rolloutChanged && this.subscribed(e.object)) {
      const changed =
        !e.old ||
        e.old.metadata.generation !== e.object.metadata.generation ||
        JSON.stringify(e.old.status ?? null) !== JSON.stringify(e.object.status ?? null);
      if (changed) this.enqueue('rollout', this.triggers.rolloutChanged, e.object, rolloutFactBody(this.triggers.rolloutChanged, this.options.clock.now(), e.object));
    }
    if (e.rt === this.appRt) {
      const ns = this.options.applicationNamespaces;
      if (ns && !ns.includes(e.object.metadata.namespace ?? '')) return;
      const op = e.object.status?.operationState;
      const failedTrigger = this.triggers.applicationSyncFailed;
      if (failedTrigger && op && (op.phase === 'Failed' || op.phase === 'Error')) {
        // oncePer: one notification per operation (its start time and revision).
        const once = `${e.object.metadata.uid}:${op.startedAt}:${op.syncResult?.revision ?? ''}:${op.phase}`;
        if (!this.notifiedOperations.has(once)) {
          this.notifiedOperations.add(once);
          this.enqueue('application', failedTrigger, e.object, applicationFactBody(failedTrigger, this.options.clock.now(), e.object));
        }
      }
      if (this.triggers.applicationChanged) {
        this.enqueue('application', this.triggers.applicationChanged, e.object, applicationFactBody(this.triggers.applicationChanged, this.options.clock.now(), e.object));
      }
    }
  }

  private scheduleHeartbeat(): void {
    const every = this.options.heartbeatEveryMs ?? 0;
    if (every <= 0 || this.stopped) return;
    this.heartbeatTimer = this.options.clock.setTimer(every, () => {
      for (const r of this.options.store.list(this.rolloutRt, undefined).items) {
        if (this.subscribed(r)) this.enqueue('rollout', this.triggers.heartbeat, r, rolloutFactBody(this.triggers.heartbeat, this.options.clock.now(), r));
      }
      this.scheduleHeartbeat();
    });
  }

  private enqueue(kind: 'rollout' | 'application', event: string, obj: KubeObject, body: unknown): void {
    if (this.stopped) return;
    const copies = 1 + Math.max(0, this.faults.duplicateDeliveries);
    const receiverDown = this.faults.receiverDown;
    for (let i = 0; i < copies; i++) {
      this.chain = this.chain.then(() => this.deliver(kind, event, obj, body, receiverDown));
    }
  }

  private async deliver(kind: 'rollout' | 'application', event: string, obj: KubeObject, body: unknown, receiverDown: boolean): Promise<void> {
    const record: DeliveryRecord = { event, kind, namespace: obj.metadata.namespace, name: obj.metadata.name, outcome: 'lost', body };
    this.deliveries.push(record);
    if (receiverDown) return; // connection refused on every retry: the engine logs and moves on
    const { url, token, retryMax = 3, retryWaitMs = 1000 } = this.options.webhook;
    for (let attempt = 0; attempt <= retryMax; attempt++) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        });
        await res.arrayBuffer();
        record.status = res.status;
        if (res.status < 500) {
          record.outcome = res.status < 300 ? 'delivered' : 'lost';
          return;
        }
      } catch {
        // network error: retried like go-retryablehttp does
      }
      if (attempt < retryMax) await new Promise<void>((resolve) => this.options.clock.setTimer(retryWaitMs, resolve));
    }
  }
}
