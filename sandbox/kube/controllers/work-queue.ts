/**
 * The reconcile loop shared by the simulated controllers: changes to watched objects and timers
 * enqueue a key; keys are reconciled one at a time in a microtask, so a controller's reaction to
 * a client's write is done before that client sees its response, and tests stay deterministic.
 */
import type { Clock, TimerHandle } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import type { ResourceType } from '../resources.js';

export interface ObjectKey {
  namespace?: string;
  name: string;
}

const MAX_PASSES = 10_000;

export class WorkQueue {
  private readonly pending = new Map<string, ObjectKey>();
  private readonly timers = new Map<string, { at: number; handle: TimerHandle }>();
  private scheduled = false;
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly reconcile: (key: ObjectKey) => void,
    private readonly onError: (err: unknown, key: ObjectKey) => void = (err) => console.error('reconcile failed', err),
  ) {}

  /** Enqueues objects of `types` on every change; `filter` may skip changes the controller ignores. */
  watch(store: ObjectStore, types: ResourceType[], filter: (event: StoreEvent) => ObjectKey[] = defaultKeys): void {
    const wanted = new Set(types);
    this.unsubscribe = store.subscribe((event) => {
      if (!wanted.has(event.rt)) return;
      for (const key of filter(event)) this.add(key);
    });
  }

  add(key: ObjectKey): void {
    if (this.stopped) return;
    this.pending.set(`${key.namespace ?? ''}/${key.name}`, key);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.drain());
    }
  }

  /** Reconciles `key` again at `at` (clock time); an earlier request wins over a later one. */
  requeueAt(key: ObjectKey, at: number): void {
    const id = `${key.namespace ?? ''}/${key.name}`;
    const existing = this.timers.get(id);
    if (existing && existing.at <= at && existing.at > this.clock.now()) return;
    existing?.handle.cancel();
    const handle = this.clock.setTimer(at - this.clock.now(), () => {
      this.timers.delete(id);
      this.add(key);
    });
    this.timers.set(id, { at, handle });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers.values()) t.handle.cancel();
    this.timers.clear();
    this.pending.clear();
  }

  private drain(): void {
    this.scheduled = false;
    let passes = 0;
    while (this.pending.size > 0 && !this.stopped) {
      if (++passes > MAX_PASSES) {
        // A reconcile that keeps changing its own objects is a simulator bug; stop looping, say so.
        this.onError(new Error('controller did not settle: a reconcile keeps changing its own objects'), { name: [...this.pending.keys()].join(',') });
        this.pending.clear();
        return;
      }
      const [id, key] = this.pending.entries().next().value as [string, ObjectKey];
      this.pending.delete(id);
      try {
        this.reconcile(key);
      } catch (err) {
        this.onError(err, key);
      }
    }
  }
}

function defaultKeys(event: StoreEvent): ObjectKey[] {
  return [{ namespace: event.object.metadata.namespace, name: event.object.metadata.name }];
}

export function keyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata.namespace, name: obj.metadata.name };
}
