/**
 * Argo Rollouts controller simulator: canary steps (setWeight, timed and indefinite pauses),
 * abort/retry, promote and promote --full, spec.paused, restartAt, scale-only changes, an image that
 * never pulls (Progressing, then Degraded at the progress deadline). Status is written through the
 * status subresource the way the real controller writes it (argo-rollouts rollout/canary.go and sync.go), one step
 * transition per reconcile, and every Kubernetes event it records is handed to listeners together
 * with the object as it was read at the start of that reconcile (what the notifications event path
 * sends, argo-rollouts#3535).
 */
import { isoSeconds, type Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore } from '../store.js';
import { runStepAnalysis, type AnalysisOutcome } from './rollout-analysis.js';
import { REVISION_ANNOTATION, RolloutPass } from './rollout-pass.js';
import { applyRestart, beginRevision, progressStep, settleAbortAndPromote, writeConditions, writeReplicas, type PodProgress } from './rollout-reconcile.js';
import { keyOf, WorkQueue, type ObjectKey } from './work-queue.js';

export interface RolloutEvent {
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  /** The Rollout as read at the start of the reconcile that recorded the event (stale by design). */
  before: KubeObject;
  /** The Rollout as persisted at the end of that reconcile. */
  after: KubeObject;
}

export interface RolloutsControllerOptions {
  store: ObjectStore;
  clock: Clock;
  /** Time new pods take to become available (default 10 s). */
  podReadyMs?: number;
  /** Images whose pods never become ready (ImagePullBackOff); default: tags containing "does-not-exist". */
  isUnpullable?: (image: string) => boolean;
  /** Record core/v1 Events in the Rollout's namespace, like the real controller (default true). */
  recordKubeEvents?: boolean;
  /** How long a step analysis runs (default 30 s). */
  analysisMs?: number;
  /** Outcome of a step analysis (default Successful): the switch for failed and inconclusive analyses. */
  analysisOutcome?: AnalysisOutcome;
}

interface StepClock {
  id: string;
  since: number;
}

export class RolloutsController {
  private readonly queue: WorkQueue;
  private readonly rt: ResourceType;
  private readonly eventRt: ResourceType;
  private readonly analysisRt: ResourceType;
  private readonly analysisMs: number;
  private readonly stepClocks = new Map<string, StepClock>();
  private readonly restartClocks = new Map<string, StepClock>();
  private readonly listeners = new Set<(event: RolloutEvent) => void>();
  private readonly podReadyMs: number;
  private readonly isUnpullable: (image: string) => boolean;

  constructor(private readonly options: RolloutsControllerOptions) {
    this.rt = options.store.registry.byKind('Rollout', 'argoproj.io');
    this.eventRt = options.store.registry.byKind('Event', '');
    this.analysisRt = options.store.registry.byKind('AnalysisRun', 'argoproj.io');
    this.analysisMs = options.analysisMs ?? 30_000;
    this.podReadyMs = options.podReadyMs ?? 10_000;
    this.isUnpullable = options.isUnpullable ?? ((image) => image.includes('does-not-exist'));
    this.queue = new WorkQueue(options.clock, (key) => this.reconcile(key));
  }

  start(): this {
    this.queue.watch(this.options.store, [this.rt]);
    for (const obj of this.options.store.list(this.rt, undefined).items) this.queue.add(keyOf(obj));
    return this;
  }

  stop(): void {
    this.queue.stop();
  }

  onEvent(listener: (event: RolloutEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private clockFor(map: Map<string, StepClock>, key: string, id: string): number {
    const existing = map.get(key);
    if (existing && existing.id === id) return existing.since;
    const since = this.options.clock.now();
    map.set(key, { id, since });
    return since;
  }

  private reconcile(key: ObjectKey): void {
    const { store, clock } = this.options;
    const before = store.tryGet(this.rt, key.namespace, key.name);
    const id = `${key.namespace}/${key.name}`;
    if (!before) {
      this.stepClocks.delete(id);
      this.restartClocks.delete(id);
      return;
    }
    const pass = new RolloutPass(before, clock.now());
    beginRevision(pass);
    const retrying = settleAbortAndPromote(pass);
    const images: string[] = (pass.spec.template?.spec?.containers ?? []).map((c: { image?: string }) => c.image ?? '');
    const unpullable = images.some((i) => this.isUnpullable(i));
    const stepSince = this.clockFor(this.stepClocks, id, `${pass.podHash}:${pass.stepIndex()}:${pass.status.abortedAt ?? ''}`);
    const pods: PodProgress = { unpullable, stepSince, podsReady: !unpullable && pass.now >= stepSince + this.podReadyMs, podReadyMs: this.podReadyMs };
    progressStep(pass, pods, (stepIndex) =>
      runStepAnalysis({
        store,
        analysisRt: this.analysisRt,
        rollout: before,
        name: `${key.name}-${pass.podHash}-${pass.revision}-${stepIndex}`,
        stepIndex,
        podHash: pass.podHash,
        now: pass.now,
        analysisMs: this.analysisMs,
        outcome: this.options.analysisOutcome,
        wake: (at) => pass.wake(at),
      }),
    );
    applyRestart(pass, () => this.clockFor(this.restartClocks, id, pass.spec.restartAt), this.podReadyMs);
    writeReplicas(pass, pods);
    writeConditions(pass, retrying);
    this.persist(key, pass);
  }

  /** The revision annotation on the main resource, then the status subresource; then the events. */
  private persist(key: ObjectKey, pass: RolloutPass): void {
    const { store } = this.options;
    const { before, annotations, status } = pass;
    if (before.metadata.annotations?.[REVISION_ANNOTATION] !== annotations[REVISION_ANNOTATION]) {
      store.mutate(this.rt, key.namespace, key.name, (o) => void (o.metadata.annotations = annotations));
    }
    const after = store.mutate(this.rt, key.namespace, key.name, (o) => void (o.status = status), { subresource: 'status' });
    if (pass.wakeAt !== Infinity) this.queue.requeueAt(key, pass.wakeAt);
    for (const e of pass.events) {
      if (this.options.recordKubeEvents !== false) this.recordKubeEvent(after, e);
      for (const l of [...this.listeners]) l({ ...e, before, after });
    }
  }

  private recordKubeEvent(rollout: KubeObject, e: { reason: string; message: string; type: string }): void {
    const now = isoSeconds(this.options.clock.now());
    this.options.store.create(this.eventRt, rollout.metadata.namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: '', generateName: `${rollout.metadata.name}.` },
      involvedObject: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        namespace: rollout.metadata.namespace,
        name: rollout.metadata.name,
        uid: rollout.metadata.uid,
        resourceVersion: rollout.metadata.resourceVersion,
      },
      reason: e.reason,
      message: e.message,
      type: e.type,
      source: { component: 'rollouts-controller' },
      reportingComponent: 'rollouts-controller',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
  }
}
