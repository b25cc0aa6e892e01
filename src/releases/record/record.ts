/**
 * The release record: what Glidepath believes about one release of one pipeline. It is the
 * only state the reducer reads and writes; the Slack renderer draws from it alone.
 */
import type { AnnouncedDetails, ApplicationObservation, RolloutPhase, TargetRef } from '../../facts/fact.js';
import type { FailingMetric } from '../../model/analysis-run.js';
import type { AppSetState, OutOfOrderDetail, StepProgress } from './appset-record.js';
import type { KargoTargetState } from './kargo-state.js';


/** What a person sees per stage row. */
export type StageStatus = 'Waiting' | 'Progressing' | 'Paused' | 'Healthy' | 'Degraded' | 'Aborted' | 'Stalled';

export type ReleaseStatus = 'Announced' | 'InProgress' | 'Paused' | 'Complete' | 'Failed' | 'Aborted' | 'Superseded';

export const FINISHED_RELEASE_STATUSES: readonly ReleaseStatus[] = ['Complete', 'Aborted', 'Superseded'];

export interface SyncOperationState {
  phase: NonNullable<ApplicationObservation['operation']>['phase'];
  message?: string;
  revision?: string;
  startedAt?: string;
  finishedAt?: string;
  retryCount?: number;
  retryLimit?: number;
  runningHooks: string[];
}

export interface TargetState {
  ref: TargetRef;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  podHash?: string;
  images: string[];
  phase: RolloutPhase;
  message: string;
  pause?: { reason: string; since?: string };
  aborted: boolean;
  step?: { index: number; count?: number; label?: string };
  /** The observation had `status.promoteFull` set (RolloutObservation.promoteFull). */
  promoteFull?: true;
  weight?: number;
  replicas?: { desired?: number; updated?: number; ready?: number; available?: number };
  restartedAt?: string;
  analysis?: { name: string; status: string; message?: string; metrics?: FailingMetric[] };
  /** Argo CD Application managing this target (Rollout targets) or the Application itself. */
  application?: string;
  sync?: SyncOperationState;
  /** Application targets: the revision Argo CD compared it against, and its sync status there. */
  revision?: string;
  /** Application targets with several sources: every revision compared against, in source order (`revision` is the first). */
  revisions?: string[];
  syncStatus?: string;
  /** Application targets: sync and health speak of a previous spec, not compared yet (argo-cd#29410; comparisonOf). */
  staleComparison?: true;
  /** Application targets: `status.health.lastTransitionTime`, when Argo CD last saw the health change. */
  healthSince?: string;
  /** Application targets: `status.reconciledAt`, the last full comparison (the status is at least this new). */
  reconciledAt?: string;
  /** The target's own latch: first time it was Healthy (as its stage judges it) at this release. */
  healthyAt?: number;
  /** The target's app labels (mixed-stage.ts APP_LABELS): the label that would split a stage mixing apps. */
  appLabels?: Record<string, string>;
  /** When the target was first seen in a non-Healthy phase, to judge the Degraded grace period. */
  phaseSince: number;
  lastHeardAt: number;
  /** Set when the target moved on to another release, */
  supersededBy?: string;
  /** …at this observation: anything not newer than it belongs to the past of this release. */
  supersededAt?: { generation?: number; resourceVersion?: string };
  /** A Kargo Stage target: its Freight, Promotion, health, verification and the per-Promotion latch. */
  kargo?: KargoTargetState;
}

export interface StageState {
  name: string;
  cluster: string;
  status: StageStatus;
  /** Keyed by targetKey(ref). */
  targets: Record<string, TargetState>;
  /**
   * Targets known to belong to this stage (heard recently) that have not reported this release
   * yet. They keep the stage from looking done, and give the "3/5 Healthy" denominator.
   */
  pending: string[];
  /** The latch: all targets were Healthy at this release at least once. Never unset by Progressing. */
  healthyAt?: number;
  lastHeardAt?: number;
  /** ApplicationSet step stages: step, members and progress at the release's revision. */
  stepProgress?: StepProgress;
  /**
   * Targets the stage selects that run other apps' releases (mixed-stage.ts): not pending for this
   * release, shown and replied about instead. Absent when the stage holds one app.
   */
  otherReleases?: OtherReleases;
  /** What the release timeline draws (timeline.ts): first fact, canary steps as first heard, pauses. Bounded. */
  timeline?: StageTimeline;
  /** The latest rejection of a step of this stage (src/actions/rejections.ts), and who approved over it. */
  rejection?: StageRejection;
}

/** A stage's history at this release, kept for the timeline image (the rest of the record holds only the present). */
export interface StageTimeline {
  /** The stage's first fact at this release (fact time). */
  startedAt: number;
  /** Canary steps as first heard, per target (its name), oldest first. */
  steps: TimelineStep[];
  /** Pauses, oldest first: `approval` waited for a person (the "paused" reply asked), `pause` did not (a timed pause, the controller's). */
  holds: TimelineHold[];
  /**
   * How many of the oldest steps and holds the bound let go (absent: none). Steps and holds are
   * kept in the order they came, so entry i of `steps` is the (stepsDropped + i)th ever heard: the
   * record codec stores each entry in a slot of its own by that number, and a new step sends one
   * small field instead of the whole timeline (bench/curve.ts).
   */
  stepsDropped?: number;
  holdsDropped?: number;
}

export interface TimelineStep {
  target: string;
  index: number;
  count?: number;
  at: number;
}

export interface TimelineHold {
  target: string;
  kind: 'approval' | 'pause';
  step?: number;
  from: number;
  /** Absent while the pause lasts. */
  to?: number;
  /** How it ended and who ended it (PauseEnd), when it did. */
  how?: PauseEnd['how'];
  by?: PauseEnd['by'];
  user?: string;
}

/** Who rejected what, why (bounded, unescaped: the renderer escapes), and who overrode it. */
export interface StageRejection {
  what: string;
  by: string;
  reason: string;
  at: number;
  overriddenBy?: string;
}

/** A stage that mixes apps: what this release runs on, what the others run, and the label that would split them. */
export interface OtherReleases {
  /** This release's targets in the stage (at most MIXED_TARGETS_NAMED), their count, and the app label they share. */
  own: MixedGroup;
  /** Other releases, by release id (at most MIXED_RELEASES_NAMED, sorted), and how many there are in all. */
  others: (MixedGroup & { releaseId: string })[];
  releaseCount: number;
  /** A label whose values tell the groups apart (one value per release), with this release's value. */
  split?: { label: string; value: string };
}

export interface MixedGroup {
  targets: string[];
  count: number;
  /** The group's value of `OtherReleases.split.label`, when the split is known. */
  app?: string;
}

export type ReleaseEventKind =
  | 'created'
  | 'scale'
  | 'restart'
  | 'template-change'
  | 'drift'
  | 'superseded'
  | 'stall'
  | 'heard-again'
  | 'removed';

export interface ReleaseEvent {
  at: number;
  kind: ReleaseEventKind;
  target?: string;
  detail: string;
}

export type ReplyKind =
  | 'paused'
  | 'degraded'
  | 'analysis-failed'
  | 'sync-failed'
  | 'sync-retrying'
  | 'aborted'
  | 'resumed'
  | 'drift'
  | 'stall'
  | 'heard-again'
  | 'hook-pinned'
  | 'appset-out-of-order'
  | 'stage-healthy'
  | 'release-complete'
  | 'mixed-stage'
  | 'promotion-failed'
  | 'verification-failed';

/** What a saved release tells the roll-up (the `event` of a `delivery.note` effect). */
export type DeliveryEvent = 'started' | 'completed' | 'failed' | 'aborted' | 'superseded';

/** What a stall reply says besides the silence (src/releases/reduce/stall.ts derives it). */
export interface StallDetail {
  /** The stage the reply is about, as the config says it is heard: its cluster and how (`facts`), and what it follows. */
  source?: { cluster: string; facts: 'webhook' | 'watch' | 'both'; follows: 'rollouts' | 'applications' | 'applicationSet' | 'kargo' };
  /** The release waits for a person besides: a canary paused for approval at `stage`, or a promotion to the Kargo stage `stage`. */
  awaiting?: { kind: 'approval' | 'promotion'; stage: string };
}

/** Replies that wait for a person go out before anything else. */
export const REPLIES_NEEDING_A_PERSON: readonly ReplyKind[] = [
  'paused',
  'degraded',
  'analysis-failed',
  'sync-failed',
  'sync-retrying',
  'aborted',
  // Someone may be about to answer the pause it ends: it goes out before routine news.
  'resumed',
  'drift',
  'stall',
  'hook-pinned',
  'appset-out-of-order',
  'promotion-failed',
  'verification-failed',
];

export interface ReplyDetail {
  /** Human text of what happened, already from the record (escaping is the renderer's job). */
  message?: string;
  generation?: number;
  uid?: string;
  podHash?: string;
  stepIndex?: number;
  stepCount?: number;
  weight?: number;
  revision?: string;
  images?: string[];
  expectedImages?: string[];
  silentSince?: number;
  retryCount?: number;
  retryLimit?: number;
  finishedAt?: string;
  /** Who ended a pause or aborted: a person outside Glidepath (kubectl, the Argo CD UI), through Glidepath, or the controller. */
  by?: 'outside' | 'glidepath' | 'controller';
  /** The Slack user who acted through Glidepath. */
  user?: string;
  /** The metrics that failed an analysis (or left it inconclusive), with their values and conditions. */
  metrics?: FailingMetric[];
  /** stage-healthy: the next stage, a Kargo Stage, that a click promotes to. */
  promoteTo?: string;
  /** …and the Freight (name) the click promotes: what proved healthy upstream when the reply was sent. */
  freight?: string;
  /** Kargo: the Promotion (or PromotionRequest) a reply is about, its phase, the step that failed (alias), who asked for it. */
  promotion?: string;
  /** Kargo: what `promotion` names (a target-aware Stage's is a PromotionRequest); absent in older records: a Promotion. */
  via?: 'Promotion' | 'PromotionRequest';
  /** Kargo: a PromotionRequest's Target that failed, and its child Promotion. */
  failedTarget?: { name: string; promotion: string; phase: string };
  phase?: string;
  step?: string;
  actor?: string;
  /** Kargo: the AnalysisRun of a failed verification. */
  analysisRun?: string;
  /** A pause ended by a full promotion (every remaining step skipped), not a resume of one step: only on evidence (`status.promoteFull`). */
  promotedFully?: boolean;
  /**
   * A pause ended and the Rollout was next heard at this step index, past steps never heard
   * (the watch was down, a takeover, lost notifications): the steps between were not seen, and
   * nothing says they were skipped.
   */
  heardAtStep?: number;
  /** stall: how the quiet stage is heard, and what the release waits for a person to do besides (src/releases/reduce/stall.ts). */
  stall?: StallDetail;
  /** mixed-stage: which targets run which release, and the label that would split the stage. */
  mixed?: OtherReleases & { selector?: string };
  /** appset-out-of-order: the step that started, the earlier steps behind, and the children involved. */
  outOfOrder?: OutOfOrderDetail;
}

/** How the pause a reply asked about ended. */
export interface PauseEnd {
  how: 'resumed' | 'promoted' | 'aborted' | 'new-version' | 'superseded';
  /** Who (resumed, promoted, aborted): through Glidepath, outside it, or the controller itself (an abort after a failed analysis). */
  by?: 'outside' | 'glidepath' | 'controller';
  user?: string;
  /** The release the target moved on to (superseded). */
  releaseId?: string;
}

/** Effects are data: the worker turns them into queue jobs after the record is saved. */
export type Effect =
  | { id: string; type: 'thread.render' }
  | {
      id: string;
      type: 'thread.reply';
      kind: ReplyKind;
      stage?: string;
      target?: TargetRef;
      needsPerson: boolean;
      detail: ReplyDetail;
    }
  /** The pause a reply asked about is over: the reply (as it was emitted) loses its buttons and says how it ended. */
  | { id: string; type: 'thread.settle'; reply: Extract<Effect, { type: 'thread.reply' }>; ended: PauseEnd }
  | { id: string; type: 'watchdog.arm'; dueAt: number }
  /** Reduce the release again at `dueAt` (a grace that ends with no fact to tell it: src/releases/reduce/recheck.ts). */
  | { id: string; type: 'release.recheck'; dueAt: number }
  /** The release opened or reached a status the delivery figures count (delivery-events.ts); `at` in ms, `leadMs` when it completed. */
  | { id: string; type: 'delivery.note'; event: DeliveryEvent; at: number; leadMs?: number }
  | {
      id: string;
      type: 'release.supersede';
      releaseId: string;
      target: TargetRef;
      at: { generation?: number; resourceVersion?: string };
    };

/** What the delivery roll-up counts of a saved batch (src/releases/worker/delivery-events.ts). */
export type DeliveryNote = Extract<Effect, { type: 'delivery.note' }>;

/** The announcement's details (images, commit, pull request, author and merger) are kept as CI sent them, or as the facts name the images. */
export interface ReleaseRecord extends AnnouncedDetails {
  schema: 1;
  /** Incremented by every save; the store's compare-and-set checks it. */
  version: number;
  pipeline: string;
  releaseId: string;
  /** Where the id came from: the release id annotation, the sorted image refs, a CI announcement, or a Kargo Freight's name. */
  idSource: 'annotation' | 'images' | 'announcement' | 'freight';
  /** A `freight-` release that a later CI announcement of its images joined: the release id CI announced (kargo-announce.ts). */
  announcedAs?: string;
  createdAt: number;
  updatedAt: number;
  lastHeardAt: number;
  status: ReleaseStatus;
  finishedAt?: number;
  /** The revision the release's Applications were compared against (latest heard): what ApplicationSet steps are judged at. */
  revision?: string;
  /** ApplicationSets the stages name, as last heard, by targetKey. */
  appSets?: Record<string, AppSetState>;
  /**
   * Children heard before their ApplicationSet listed them (its status is written after it creates
   * them, and comes on another stream), by target key: kept out of every row, and placed in their
   * step's row once it does (placeListedChildren), so no observation of them is lost. Bounded.
   * `appSet`: the owning ApplicationSet's target key.
   */
  unlistedChildren?: Record<string, { appSet: string; target: TargetState }>;
  /** In pipeline order. */
  stages: StageState[];
  stall?: { alertedAt: number; silentSince: number };
  /**
   * Releases this release's targets ran before it (newest last, bounded): a target still at one of
   * them is still to start; a target at another release belongs to another app (mixed-stage.ts).
   */
  movedFrom?: string[];
  /** Keys of replies already emitted, so a repeated or reordered fact never repeats a reply. */
  notices: string[];
  /** Newest last; bounded. */
  events: ReleaseEvent[];
  /** facts: distinct observations applied; duplicate: the same observation again (heartbeats, redeliveries). Stale and out-of-order facts change no record: they are metrics. */
  counters: { facts: number; duplicate: number };
  /** Effects saved with the record and not yet handed to their queues (transactional outbox). */
  outbox: Effect[];
}
