/**
 * Facts about Kargo objects, from the watch source (Kargo OSS sends no notifications). A Stage is
 * a target of a pipeline stage (`cluster/project/kargo:<stage>`); a Promotion reports on the
 * Stage it promotes; a Freight only enriches the release that carries it (it opens none).
 */
import type { KargoPromotionState, KargoVerificationState } from '../model/kargo-stage-reading.js';
import type { FactSource, TargetRef } from './fact.js';

/** What a Freight carries, as Glidepath keeps it (bounded). */
export interface KargoFreightRef {
  name: string;
  alias?: string;
  warehouse?: string;
  /** `repoURL:tag` (or `repoURL@digest` when it has no tag), sorted. */
  images: string[];
  /** `repoURL@digest` of every image, sorted; empty unless every image has a digest. */
  digests: string[];
  /** OCI annotations of its images (the first image, in sorted order, wins on a clash): a release id may be one. */
  annotations: Record<string, string>;
  /** At most a few: repository and commit id or tag. */
  commits: { repoURL?: string; id?: string; tag?: string }[];
  /** False when only the name is known (a PromotionRequest names its Freight only): no release id can be derived then. */
  resolved: boolean;
}

/** A Promotion's (or PromotionRequest's) and a verification's state: one type, the model's (src/model/kargo-stage-reading.ts). */
export type { KargoPromotionState, KargoPromotionVia, KargoVerificationState } from '../model/kargo-stage-reading.js';
export interface KargoStageObservation {
  uid?: string;
  generation?: number;
  resourceVersion: string;
  labels: Record<string, string>;
  /** `spec.targets` is set (Kargo main): promoted through PromotionRequests. */
  targetAware: boolean;
  /** `spec.verification` is set: the Freight is done here only once verified. */
  verificationConfigured: boolean;
  /** Kargo's live `status.health.status`: Healthy, Progressing, Unknown, Unhealthy, NotApplicable. */
  health?: string;
  /** The Healthy condition's reason and message, when not Healthy. */
  healthReason?: string;
  /** The Freight this observation is about: its current Promotion's, else its last Promotion's, else `freightHistory[0]`. */
  freight?: KargoFreightRef;
  /** Name of the Freight the Stage holds now (`freightHistory[0]`). */
  currentFreight?: string;
  /** The current Promotion (or PromotionRequest), else the last one. */
  promotion?: KargoPromotionState;
  /** The newest verification of `freight`, when `freight` is the Freight the Stage holds. */
  verification?: KargoVerificationState;
}

export interface KargoStageFact {
  kind: 'kargo-stage';
  source: FactSource;
  event: string;
  sentAt?: number;
  receivedAt: number;
  target: TargetRef;
  stage: KargoStageObservation;
  /**
   * The Stage left the watch: deleted, or its labels no longer match the selector in `removedFrom`
   * (the watch then says DELETED), or missing from a relist. It stops counting at once.
   */
  removed?: { from: string };
}

export interface KargoPromotionFact {
  kind: 'kargo-promotion';
  source: FactSource;
  event: string;
  sentAt?: number;
  receivedAt: number;
  /** The Stage the Promotion promotes to. */
  target: TargetRef;
  /** That Stage's labels, when the watch knows them (label-selected stages route by them). */
  stageLabels?: Record<string, string>;
  uid?: string;
  promotion: KargoPromotionState;
  freight?: KargoFreightRef;
}

export interface KargoFreightFact {
  kind: 'kargo-freight';
  source: FactSource;
  event: string;
  sentAt?: number;
  receivedAt: number;
  cluster: string;
  /** The Kargo project (namespace). */
  namespace: string;
  uid?: string;
  resourceVersion: string;
  freight: KargoFreightRef;
}

export type KargoFact = KargoStageFact | KargoPromotionFact | KargoFreightFact;
