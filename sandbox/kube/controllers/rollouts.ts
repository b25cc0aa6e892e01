/**
 * Argo Rollouts controller simulator: canary steps (setWeight, timed and indefinite pauses),
 * abort/retry, promote and promote --full, spec.paused, restartAt, scale-only changes, an image that
 * never pulls (Progressing, then Degraded at the progress deadline). Status is written through the
 * status subresource the way the real controller writes it (notes/rollouts.md §1), one step
 * transition per reconcile, and every Kubernetes event it records is handed to listeners together
 * with the object as it was read at the start of that reconcile (what the notifications event path
 * sends, argo-rollouts#3535).
 */
import { canaryStepLabel } from '../../../src/model/rollout-steps.js';
import { isoSeconds, type Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore } from '../store.js';
import { safeHash } from './hash.js';
import { pauseDurationMs, rolloutPhase, setCondition, type CanaryStepSpec, type RolloutCondition } from './rollout-status.js';
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
  analysisOutcome?: (rollout: KubeObject, templates: string[]) => { phase: 'Successful' | 'Failed' | 'Error' | 'Inconclusive'; message?: string };
}

const REVISION = 'rollout.argoproj.io/revision';

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
    const now = clock.now();
    const nowIso = isoSeconds(now);
    const spec = before.spec ?? {};
    const status: Record<string, any> = structuredClone(before.status ?? {}); // eslint-disable-line @typescript-eslint/no-explicit-any
    const canary = spec.strategy?.canary as { steps?: CanaryStepSpec[]; trafficRouting?: unknown; canaryService?: string; stableService?: string } | undefined;
    const steps: CanaryStepSpec[] = canary?.steps ?? [];
    const replicas: number = spec.replicas ?? 1;
    const podHash = safeHash(spec.template);
    const rsName = `${key.name}-${podHash}`;
    const annotations = { ...(before.metadata.annotations ?? {}) };
    let revision = Number(annotations[REVISION] ?? '0');
    const events: Omit<RolloutEvent, 'before' | 'after'>[] = [];
    const record = (reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): void => void events.push({ reason, message, type });
    let conditions: RolloutCondition[] = status.conditions ?? [];
    const condition = (type: string, s: RolloutCondition['status'], reason: string, message: string): void => {
      conditions = setCondition(conditions, type, s, reason, message, nowIso);
    };
    let wakeAt = Infinity;
    const wake = (at: number): void => void (wakeAt = Math.min(wakeAt, at));

    // A new pod template (or the first sight of the Rollout) starts a new revision.
    if (!status.currentPodHash) {
      revision = Math.max(revision, 1);
      status.currentPodHash = podHash;
      status.stableRS = podHash;
      if (canary) status.currentStepIndex = steps.length;
      record('RolloutUpdated', `Rollout updated to revision ${revision}`);
      record('RolloutCompleted', `Rollout completed update to revision ${revision} (${podHash}): Initial deploy`);
    } else if (podHash !== status.currentPodHash) {
      revision += 1;
      status.currentPodHash = podHash;
      for (const f of ['abort', 'abortedAt', 'pauseConditions', 'controllerPause', 'promoteFull']) delete status[f];
      if (canary) status.currentStepIndex = podHash === status.stableRS ? steps.length : 0;
      conditions = conditions.filter((c) => !(c.type === 'Progressing' && (c.reason === 'RolloutAborted' || c.reason === 'ProgressDeadlineExceeded')));
      condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`);
      record('RolloutUpdated', `Rollout updated to revision ${revision}`);
    }
    annotations[REVISION] = String(revision);
    status.currentStepHash = safeHash(steps);
    const fullyPromoted = (): boolean => status.stableRS === status.currentPodHash;
    const clearPause = (): void => {
      delete status.pauseConditions;
      delete status.controllerPause;
    };
    /** The controller's abort: back to step 0, no pause, a RolloutAborted condition and event. */
    const markAborted = (why: string): void => {
      status.abortedAt = nowIso;
      if (canary) status.currentStepIndex = 0;
      clearPause();
      condition('Progressing', 'False', 'RolloutAborted', why);
      record('RolloutAborted', why, 'Warning');
    };

    // Abort and retry (`kubectl argo rollouts abort` / `retry` write status.abort).
    let retrying = false;
    if (status.abort && fullyPromoted()) {
      delete status.abort;
      delete status.abortedAt;
    } else if (status.abort && !status.abortedAt) {
      markAborted(`Rollout aborted update to revision ${revision}`);
    } else if (!status.abort && status.abortedAt) {
      delete status.abortedAt;
      if (canary) status.currentStepIndex = 0;
      condition('Progressing', 'Unknown', 'RolloutRetry', 'Retrying Rollout after abort');
      retrying = true;
    }
    const aborted = Boolean(status.abort) && !fullyPromoted();

    if (status.promoteFull) {
      if (fullyPromoted()) delete status.promoteFull;
      else {
        if (canary) status.currentStepIndex = steps.length;
        clearPause();
      }
    }

    const images: string[] = (spec.template?.spec?.containers ?? []).map((c: { image?: string }) => c.image ?? '');
    const unpullable = images.some((i) => this.isUnpullable(i));
    const stepIndex = (): number => status.currentStepIndex ?? 0;
    const stepSince = this.clockFor(this.stepClocks, `${key.namespace}/${key.name}`, `${podHash}:${stepIndex()}:${status.abortedAt ?? ''}`);
    const podsReady = !unpullable && now >= stepSince + this.podReadyMs;
    let deadlineExceeded = conditions.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded');
    const pausedBySpec = Boolean(spec.paused);

    let analysisStatus: { name: string; status: string; message?: string } | undefined = status.canary?.currentStepAnalysisRunStatus;
    // One step transition per reconcile, as the real controller requeues after each status write.
    if (!aborted && !pausedBySpec && !fullyPromoted() && !deadlineExceeded) {
      const idx = stepIndex();
      const step = canary ? steps[idx] : undefined;
      const completeStep = (): void => {
        status.currentStepIndex = idx + 1;
        record('RolloutStepCompleted', `Rollout step ${idx + 1}/${steps.length} completed (${canaryStepLabel(step ?? {})})`);
      };
      if (!step) {
        if (podsReady) {
          status.stableRS = podHash;
          delete status.promoteFull;
          record('RolloutCompleted', `Rollout completed update to revision ${revision} (${podHash}): Completed all ${steps.length} canary steps`);
        } else if (!unpullable) wake(stepSince + this.podReadyMs);
      } else if (step.pause) {
        const duration = pauseDurationMs(step.pause);
        const mine = (status.pauseConditions ?? []).find((p: { reason: string }) => p.reason === 'CanaryPauseStep');
        if (mine) {
          if (duration !== undefined && duration >= 0) {
            const end = Date.parse(mine.startTime) + duration;
            if (now >= end) {
              clearPause();
              completeStep();
            } else wake(end);
          }
        } else if (status.controllerPause) {
          // The user cleared pauseConditions (promote): the controller acknowledges and moves on.
          clearPause();
          record('RolloutResumed', 'Rollout is resumed');
          completeStep();
        } else {
          status.pauseConditions = [{ reason: 'CanaryPauseStep', startTime: nowIso }];
          status.controllerPause = true;
          record('RolloutPaused', 'Rollout is paused (CanaryPauseStep)');
          if (duration !== undefined && duration >= 0) wake(now + duration);
        }
      } else if (step.analysis) {
        const result = this.stepAnalysis(before, `${key.name}-${podHash}-${revision}-${idx}`, idx, podHash, now, wake);
        analysisStatus = result.status;
        if (result.phase === 'Successful') completeStep();
        else if (result.phase === 'Failed' || result.phase === 'Error') {
          const why = `Rollout aborted update to revision ${revision}: Step-based analysis phase ${result.phase}: ${result.message}`;
          status.abort = true;
          markAborted(why);
        } else if (result.phase === 'Inconclusive') {
          const inconclusive = (status.pauseConditions ?? []).some((p: { reason: string }) => p.reason === 'InconclusiveAnalysisRun');
          if (!inconclusive && status.controllerPause) {
            // Resumed by the user (pauseConditions cleared): the step counts as done.
            delete status.controllerPause;
            completeStep();
          } else if (!inconclusive) {
            status.pauseConditions = [{ reason: 'InconclusiveAnalysisRun', startTime: nowIso }];
            status.controllerPause = true;
            record('RolloutPaused', 'Rollout is paused (InconclusiveAnalysisRun)');
          }
        }
      } else if (podsReady) {
        completeStep();
      } else if (!unpullable) {
        wake(stepSince + this.podReadyMs);
      }
      // The progress deadline only runs while pods are expected to come up (not during pauses or analysis).
      if (!podsReady && !step?.pause && !step?.analysis) {
        const deadline = stepSince + (spec.progressDeadlineSeconds ?? 600) * 1000;
        if (now >= deadline) {
          deadlineExceeded = true;
          condition('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`);
          record('RolloutNotCompleted', `Rollout not completed: ReplicaSet "${rsName}" has timed out progressing.`, 'Warning');
          if (spec.progressDeadlineAbort) status.abort = true;
        } else wake(deadline);
      }
    }

    // spec.restartAt: pods are replaced, then restartedAt records the request.
    if (spec.restartAt && spec.restartAt !== status.restartedAt) {
      const at = Date.parse(spec.restartAt);
      if (at > now) wake(at);
      else {
        const since = this.clockFor(this.restartClocks, `${key.namespace}/${key.name}`, spec.restartAt);
        if (now >= since + this.podReadyMs) {
          status.restartedAt = spec.restartAt;
          record('RolloutRestarted', `Rollout restarted pods older than ${spec.restartAt}`);
        } else wake(since + this.podReadyMs);
      }
    }

    // Replica counts from the current weight.
    const idx = stepIndex();
    const weightAt = (i: number): number => {
      let w = 0;
      for (let k = 0; k <= Math.min(i, steps.length - 1); k++) if (steps[k]?.setWeight !== undefined) w = steps[k]!.setWeight!;
      return w;
    };
    const stillAborted = Boolean(status.abort) && !fullyPromoted();
    const weight = fullyPromoted() ? 100 : stillAborted ? 0 : canary ? (idx >= steps.length ? 100 : weightAt(idx)) : 100;
    const previousWeight = fullyPromoted() || stillAborted ? weight : idx === 0 ? 0 : weightAt(idx - 1);
    const trafficRouting = Boolean(canary?.trafficRouting);
    const updated = Math.ceil((replicas * weight) / 100);
    const updatedReady = unpullable ? 0 : podsReady || fullyPromoted() ? updated : Math.min(updated, Math.ceil((replicas * previousWeight) / 100));
    const stable = fullyPromoted() ? 0 : trafficRouting ? replicas : replicas - updated;
    status.replicas = stable + updated;
    status.updatedReplicas = updated;
    status.readyReplicas = stable + updatedReady;
    status.availableReplicas = stable + updatedReady;
    status.HPAReplicas = status.replicas;
    status.selector = Object.entries(spec.selector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',');
    status.blueGreen = status.blueGreen ?? {};
    // The step analysis status stays until the next revision (the real controller keeps the last one).
    if (analysisStatus && !analysisStatus.name.startsWith(`${key.name}-${podHash}-`)) analysisStatus = undefined;
    status.canary = {
      ...(analysisStatus ? { currentStepAnalysisRunStatus: analysisStatus } : {}),
      ...(trafficRouting
        ? {
            weights: {
              canary: { podTemplateHash: podHash, serviceName: canary?.canaryService, weight: fullyPromoted() ? 0 : weight },
              stable: { podTemplateHash: status.stableRS, serviceName: canary?.stableService, weight: fullyPromoted() ? 100 : 100 - weight },
            },
          }
        : {}),
    };

    // Conditions.
    const paused = pausedBySpec || (status.pauseConditions ?? []).length > 0;
    const available = status.availableReplicas >= replicas - Math.floor(replicas / 4);
    condition('Available', available ? 'True' : 'False', 'AvailableReason', available ? 'Rollout has minimum availability' : 'Rollout does not have minimum availability');
    if (!stillAborted && !deadlineExceeded && !retrying) {
      if (paused) condition('Progressing', 'Unknown', 'RolloutPaused', 'Rollout is paused');
      else if (fullyPromoted() && status.availableReplicas >= replicas) {
        condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`);
      } else condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`);
    }
    // checkPausedConditions skips when an abort condition exists, which leaves Paused stale.
    const abortCondition = conditions.some((c) => c.reason === 'RolloutAborted');
    if (!abortCondition && (paused || conditions.some((c) => c.type === 'Paused'))) {
      condition('Paused', paused ? 'True' : 'False', 'RolloutPaused', 'Rollout is paused');
    }
    condition('Completed', fullyPromoted() ? 'True' : 'False', 'RolloutCompleted', 'RolloutCompleted');
    const healthy = fullyPromoted() && !paused && status.availableReplicas >= replicas && status.updatedReplicas >= replicas;
    condition('Healthy', healthy ? 'True' : 'False', 'RolloutHealthy', healthy ? 'Rollout is healthy' : 'Rollout is not healthy');
    status.conditions = conditions;
    status.observedGeneration = String(before.metadata.generation);
    const { phase, message } = rolloutPhase({
      conditions,
      specPaused: pausedBySpec,
      pauseConditions: status.pauseConditions ?? [],
      restartAt: spec.restartAt,
      restartedAt: status.restartedAt,
      specReplicas: replicas,
      updatedReplicas: status.updatedReplicas,
      availableReplicas: status.availableReplicas,
      replicas: status.replicas,
      trafficRouting,
      fullyPromoted: fullyPromoted(),
    });
    status.phase = phase;
    if (message) status.message = message;
    else delete status.message;
    // sendStateChangeEvents: a manual pause (spec.paused) and its end are events too.
    const wasPaused = before.status?.phase === 'Paused';
    const recorded = (reason: string): boolean => events.some((e) => e.reason === reason);
    if (phase === 'Paused' && !wasPaused && !recorded('RolloutPaused')) record('RolloutPaused', `Rollout is paused (${message})`);
    if (wasPaused && phase !== 'Paused' && !recorded('RolloutResumed') && !stillAborted) record('RolloutResumed', 'Rollout is resumed');

    // Persist: the revision annotation on the main resource, then the status subresource.
    if (before.metadata.annotations?.[REVISION] !== annotations[REVISION]) {
      store.mutate(this.rt, key.namespace, key.name, (o) => void (o.metadata.annotations = annotations));
    }
    const after = store.mutate(this.rt, key.namespace, key.name, (o) => void (o.status = status), { subresource: 'status' });
    if (wakeAt !== Infinity) this.queue.requeueAt(key, wakeAt);
    for (const e of events) {
      if (this.options.recordKubeEvents !== false) this.recordKubeEvent(after, e);
      for (const l of [...this.listeners]) l({ ...e, before, after });
    }
  }

  /** Creates the step's AnalysisRun and completes it after the analysis duration with the configured outcome. */
  private stepAnalysis(
    rollout: KubeObject,
    name: string,
    stepIndex: number,
    podHash: string,
    now: number,
    wake: (at: number) => void,
  ): { phase: string; message: string; status: { name: string; status: string; message?: string } } {
    const { store } = this.options;
    const ns = rollout.metadata.namespace;
    const step = rollout.spec.strategy.canary.steps[stepIndex].analysis as { templates?: { templateName: string }[] };
    const templates = (step.templates ?? []).map((t) => t.templateName);
    let run = store.tryGet(this.analysisRt, ns, name);
    if (!run) {
      run = store.create(this.analysisRt, ns, {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AnalysisRun',
        metadata: {
          name,
          labels: { 'rollout-type': 'Step', 'step-index': String(stepIndex), 'rollouts-pod-template-hash': podHash },
          ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: rollout.metadata.name, uid: rollout.metadata.uid!, controller: true, blockOwnerDeletion: true }],
        },
        spec: { metrics: templates.map((t) => ({ name: t, provider: { prometheus: { address: 'http://prometheus.monitoring:9090', query: `${t}{rollout="${rollout.metadata.name}"}` } }, successCondition: 'result[0] >= 0.95' })) },
        status: { phase: 'Running', startedAt: isoSeconds(now) },
      });
    }
    const runStatus = run.status ?? {};
    if (runStatus.phase === 'Running') {
      const due = Date.parse(runStatus.startedAt) + this.analysisMs;
      if (now < due) {
        wake(due);
        return { phase: 'Running', message: '', status: { name, status: 'Running' } };
      }
      const outcome = this.options.analysisOutcome?.(rollout, templates) ?? { phase: 'Successful' };
      const message = outcome.message ?? (outcome.phase === 'Successful' ? '' : `metric "${templates[0] ?? 'analysis'}" assessed ${outcome.phase}`);
      run = store.mutate(this.analysisRt, ns, name, (r) => {
        r.status = {
          phase: outcome.phase,
          startedAt: runStatus.startedAt,
          completedAt: isoSeconds(now),
          ...(message ? { message } : {}),
          metricResults: templates.map((t) => ({ name: t, phase: outcome.phase, count: 1, ...(outcome.phase === 'Successful' ? { successful: 1 } : outcome.phase === 'Failed' ? { failed: 1 } : {}) })),
        };
      });
    }
    const phase: string = run.status.phase;
    const message: string = run.status.message ?? '';
    return { phase, message, status: { name, status: phase, ...(message ? { message } : {}) } };
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
