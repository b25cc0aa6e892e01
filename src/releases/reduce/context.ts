import type { PipelineConfig } from '../../config/file.js';
import type { AppSetState } from '../record/appset-record.js';
import type { OwnAction } from './own-action-keys.js';
import type { ReleaseRecord } from '../record/record.js';

/** The latest known state of each ApplicationSet, by its target key (one pipeline's). */
export type KnownAppSets = Readonly<Record<string, AppSetState>>;

/** What the target index knows of a target: the release it runs and its app labels. */
export interface KnownTarget {
  releaseId: string;
  appLabels?: Readonly<Record<string, string>>;
}

/** What the pure reducer needs to know beyond the record and the fact. */
export interface ReduceContext {
  pipeline: PipelineConfig;
  /** The release the fact was routed to. */
  releaseId: string;
  /** Stage the fact was matched to (cluster facts only). */
  stage?: string;
  /** How the release id of a cluster fact was found. */
  idSource?: ReleaseRecord['idSource'];
  /** Release the fact's target ran before this fact, from the target index (undefined when unknown). */
  previousReleaseOfTarget?: string;
  /** Targets known to belong to each stage (recently heard), from the target index. */
  knownTargets?: Record<string, string[]>;
  /** What the target index knows each target runs (release id, app labels): tells a target still to start from another app's (mixed-stage.ts). */
  targetReleases?: ReadonlyMap<string, KnownTarget>;
  /**
   * The latest state heard of each ApplicationSet the pipeline names (the worker's side index,
   * written whenever an ApplicationSet fact is processed): a record adopts it when it is newer than
   * its own, so a release opened after the ApplicationSet was heard knows its step membership.
   */
  appSets?: KnownAppSets;
  /** Actions Glidepath itself sent, per target key (from the own-actions ledger), to tell them from changes made outside it. */
  ownActions?: Record<string, readonly OwnAction[]>;
  stallAfterMs: number;
  /** How each cluster is heard (the config's `facts`), for what a stall reply says may be wrong; absent: webhook. */
  clusterFacts?: Readonly<Record<string, 'webhook' | 'watch' | 'both'>>;
  /** Degraded or Unknown after the stage was healthy is reported only when it lasts this long. */
  unhealthyGraceMs: number;
  /** An Argo CD operation Running this long while its Rollout is paused is reported as hook-pinned. */
  hookPinnedAfterMs: number;
  /** Set by reduceDraft: update the given record instead of a copy. */
  inPlace?: boolean;
  /** Set by the reducer itself: whether the record expected progress before this fact. */
  wasExpectingProgress?: boolean;
}

export const MAX_EVENTS = 50;
export const MAX_NOTICES = 500;
