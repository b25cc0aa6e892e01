/**
 * A Fact is one observation of one object at one moment, normalised from whatever carried it
 * (a notification webhook today, a Kubernetes watch later). Everything downstream of the
 * ingest boundary works on these types only.
 */
import type { FailingMetric } from '../model/analysis-run.js';
import type { RolloutPhase } from '../model/rollout.js';
import type { KargoFact } from './kargo-fact.js';

export type { KargoFact, KargoFreightFact, KargoFreightRef, KargoPromotionFact, KargoPromotionState, KargoStageFact, KargoStageObservation, KargoVerificationState } from './kargo-fact.js';

export type FactSource = 'rollouts-webhook' | 'argocd-webhook' | 'ci' | 'watch' | 'watchdog' | 'internal';

export type TargetKind = 'Rollout' | 'Application' | 'ApplicationSet' | 'KargoStage';

export interface TargetRef {
  kind: TargetKind;
  cluster: string;
  namespace: string;
  name: string;
}

export function targetKey(ref: TargetRef): string {
  const prefix = ref.kind === 'Rollout' ? '' : ref.kind === 'ApplicationSet' ? 'appset:' : ref.kind === 'KargoStage' ? 'kargo:' : 'app:';
  return `${ref.cluster}/${ref.namespace}/${prefix}${ref.name}`;
}

/** Rollout phases as the controller computes them (Unknown when even the client-side rules cannot tell). */
export type { RolloutPhase };

export interface RolloutObservation {
  uid: string;
  generation: number;
  /** False when the controller had not yet observed `metadata.generation` (rule A: a stale fact). */
  observed: boolean;
  resourceVersion: string;
  labels: Record<string, string>;
  /** Annotations without `kubectl.kubernetes.io/last-applied-configuration` and `notified.*`. */
  annotations: Record<string, string>;
  /** Container images of the pod template, sorted. */
  images: string[];
  podHash?: string;
  stableHash?: string;
  phase: RolloutPhase;
  message: string;
  /** Present when the Rollout waits for a person (pauseConditions or spec.paused), judged from phase, never the Paused condition. */
  pause?: { reason: string; since?: string };
  aborted: boolean;
  abortedAt?: string;
  /** Canary step position: index is 0-based, count is the number of steps (index === count when done). */
  step?: { index: number; count?: number; label?: string };
  /**
   * `status.promoteFull` was set (`kubectl argo rollouts promote --full`, Argo CD's promote-full):
   * the evidence of a full promotion. The controller clears it once the stable switches, so a
   * fact heard only after that carries none, and the jump in steps alone is not evidence.
   */
  promoteFull?: true;
  /** Canary traffic weight in percent, when known. */
  weight?: number;
  replicas: { desired?: number; current?: number; updated?: number; ready?: number; available?: number };
  restartedAt?: string;
  /** Step analysis run, when one is current; `metrics` (read from the AnalysisRun) when it failed or was inconclusive. */
  analysis?: { name: string; status: string; message?: string; metrics?: FailingMetric[] };
  /** Name of the Argo CD Application that manages this Rollout (from the tracking id), when known. */
  managedBy?: string;
}

export interface RolloutFact {
  kind: 'rollout';
  source: FactSource;
  /** Name of the trigger or event that sent the fact (`on-glidepath-rollout-paused`, `heartbeat`, `watch`). */
  event: string;
  sentAt?: number;
  receivedAt: number;
  target: TargetRef;
  rollout: RolloutObservation;
}

export type SyncPhase = 'Running' | 'Terminating' | 'Failed' | 'Error' | 'Succeeded';

export interface ApplicationObservation {
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Name of the ApplicationSet that controls this Application, if any. */
  appSet?: string;
  destination?: { server?: string; name?: string; namespace?: string };
  syncStatus?: string;
  revisions: string[];
  health?: { status: string; message?: string };
  /** `status.health.lastTransitionTime`: when Argo CD last saw the health change (its clock). */
  healthSince?: string;
  /** Whether sync and health are about the current spec (`comparedTo`, model/application.ts comparisonOf); absent: not known. */
  comparison?: 'fresh' | 'stale';
  reconciledAt?: string;
  /** `status.summary.images`, sorted: the images the Application's live resources run. */
  images?: string[];
  operation?: {
    phase: SyncPhase;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    retryCount?: number;
    /** `operation.retry.limit`: how many times Argo CD retries a failed attempt. */
    retryLimit?: number;
    revision?: string;
    initiatedBy?: string;
    /** Hooks of the running operation still in progress, e.g. a PostSync Job waiting on a paused Rollout. */
    runningHooks: string[];
  };
}

export interface ApplicationFact {
  kind: 'application';
  source: FactSource;
  event: string;
  sentAt?: number;
  receivedAt: number;
  target: TargetRef;
  application: ApplicationObservation;
}

/** What CI says of a release it announces: its images, the change, and who wrote and merged it. The record keeps the same. */
export interface AnnouncedDetails {
  images: string[];
  commit?: string;
  pullRequestUrl?: string;
  author?: string;
  /** Slack user ids of the change's author and its merger (the approvals gate leaves them out: src/actions/quorum.ts). */
  authorSlackId?: string;
  mergedBySlackId?: string;
}

/** CI announces a merged release before any cluster has seen it; this starts the stall clock. */
export interface ReleaseAnnouncedFact extends AnnouncedDetails {
  kind: 'release';
  source: 'ci';
  receivedAt: number;
  cluster?: string;
  pipeline: string;
  releaseId: string;
}

/** The stall watchdog fired: nothing was heard from the release since `silentSince`. */
export interface WatchdogFact {
  kind: 'watchdog';
  source: 'watchdog';
  receivedAt: number;
  pipeline: string;
  releaseId: string;
  silentSince: number;
  /** Not a stall check: a due time the reducer asked for (`release.recheck`), `silentSince` being that time. */
  recheck?: true;
}

/** A target of this release moved on to another release (emitted by the reducer of the newer one). */
export interface SupersededFact {
  kind: 'superseded';
  source: 'internal';
  receivedAt: number;
  pipeline: string;
  releaseId: string;
  target: TargetRef;
  byReleaseId: string;
  /** The observation of the target under the newer release. */
  at: { generation?: number; resourceVersion?: string };
}

/**
 * A person rejected a step of this release with a reason, or approved over a standing rejection
 * (`overriddenBy`): emitted by the action engine (src/actions/rejections.ts), so the record (and
 * so the parent message) says so through the reducer like every other change.
 */
export interface RejectionFact {
  kind: 'rejection';
  source: 'internal';
  receivedAt: number;
  pipeline: string;
  releaseId: string;
  stage: string;
  /** What was rejected, in words: "approve step 2 of prod/shop/checkout". */
  what: string;
  /** The Slack user who rejected, and the reason in their words (bounded, not yet escaped). */
  by: string;
  reason: string;
  /** The Slack user who approved over the rejection, when this fact says so. */
  overriddenBy?: string;
}

/** One child's entry in an ApplicationSet's `status.applicationStatus` (RollingSync progress). */
export interface AppSetMemberObservation {
  application: string;
  /** Waiting | Pending | Progressing | Healthy, as the ApplicationSet controller judged it. */
  status: string;
  /** 1-based RollingSync step, as a string; "-1" when no step selects the child. */
  step: string;
  /** The revisions the child was last compared against, as the controller saw them. */
  targetRevisions: string[];
  message?: string;
  /** When the controller last changed this entry (its clock): when a step was seen to start. */
  lastTransitionTime?: string;
}

export interface ApplicationSetObservation {
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  /** Number of RollingSync steps in the spec (absent when the strategy is not RollingSync). */
  stepCount?: number;
  members: AppSetMemberObservation[];
}

/** An ApplicationSet seen by the watch source (no notification carries one). */
export interface ApplicationSetFact {
  kind: 'application-set';
  source: FactSource;
  event: string;
  sentAt?: number;
  receivedAt: number;
  target: TargetRef;
  appSet: ApplicationSetObservation;
}

export type ClusterFact = RolloutFact | ApplicationFact | KargoFact;
export type Fact = ClusterFact | ApplicationSetFact | ReleaseAnnouncedFact | WatchdogFact | SupersededFact | RejectionFact;
