/**
 * The working state of one Rollouts-controller reconcile: the Rollout as read, the status being
 * built, the conditions, the events to record and when to wake again. The reconcile phases
 * (rollout-reconcile.ts) read and change it in order; the controller persists it at the end.
 */
import { isoSeconds } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { CanaryStepSpec } from './canary-steps.js';
import { safeHash } from './hash.js';
import { setCondition, type RolloutCondition } from './rollout-status.js';

export const REVISION_ANNOTATION = 'rollout.argoproj.io/revision';

export interface PendingEvent {
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
}

export interface StepAnalysisStatus {
  name: string;
  status: string;
  message?: string;
}

export interface CanarySpec {
  steps?: CanaryStepSpec[];
  trafficRouting?: unknown;
  canaryService?: string;
  stableService?: string;
}

export class RolloutPass {
  readonly nowIso: string;
  readonly spec: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly status: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly canary: CanarySpec | undefined;
  readonly steps: CanaryStepSpec[];
  readonly replicas: number;
  readonly podHash: string;
  readonly rsName: string;
  readonly annotations: Record<string, string>;
  readonly pausedBySpec: boolean;
  revision: number;
  conditions: RolloutCondition[];
  readonly events: PendingEvent[] = [];
  wakeAt = Infinity;
  /** Set when the progress deadline has passed (read from the conditions, or found in this pass). */
  deadlineExceeded: boolean;
  /** `status.canary.currentStepAnalysisRunStatus` as it will be written. */
  analysisStatus: StepAnalysisStatus | undefined;

  constructor(
    readonly before: KubeObject,
    readonly now: number,
  ) {
    this.nowIso = isoSeconds(now);
    this.spec = before.spec ?? {};
    this.status = structuredClone(before.status ?? {});
    this.canary = this.spec.strategy?.canary as CanarySpec | undefined;
    this.steps = this.canary?.steps ?? [];
    this.replicas = this.spec.replicas ?? 1;
    this.podHash = safeHash(this.spec.template);
    this.rsName = `${before.metadata.name}-${this.podHash}`;
    this.annotations = { ...(before.metadata.annotations ?? {}) };
    this.revision = Number(this.annotations[REVISION_ANNOTATION] ?? '0');
    this.conditions = this.status.conditions ?? [];
    this.pausedBySpec = Boolean(this.spec.paused);
    this.deadlineExceeded = this.conditions.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded');
    this.analysisStatus = this.status.canary?.currentStepAnalysisRunStatus;
  }

  record(reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): void {
    this.events.push({ reason, message, type });
  }

  recorded(reason: string): boolean {
    return this.events.some((e) => e.reason === reason);
  }

  condition(type: string, s: RolloutCondition['status'], reason: string, message: string): void {
    this.conditions = setCondition(this.conditions, type, s, reason, message, this.nowIso);
  }

  wake(at: number): void {
    this.wakeAt = Math.min(this.wakeAt, at);
  }

  fullyPromoted(): boolean {
    return this.status.stableRS === this.status.currentPodHash;
  }

  stepIndex(): number {
    return this.status.currentStepIndex ?? 0;
  }

  clearPause(): void {
    delete this.status.pauseConditions;
    delete this.status.controllerPause;
  }

  /** The controller's abort: back to step 0, no pause, a RolloutAborted condition and event. */
  markAborted(why: string): void {
    this.status.abortedAt = this.nowIso;
    if (this.canary) this.status.currentStepIndex = 0;
    this.clearPause();
    this.condition('Progressing', 'False', 'RolloutAborted', why);
    this.record('RolloutAborted', why, 'Warning');
  }

  /** An abort requested and not yet undone by a full promotion. */
  aborted(): boolean {
    return Boolean(this.status.abort) && !this.fullyPromoted();
  }
}
