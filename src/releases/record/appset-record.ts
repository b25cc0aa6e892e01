/**
 * What a release record keeps about the ApplicationSets its stages name: each child's RollingSync
 * step and progress as the ApplicationSet's `status.applicationStatus` last said it, and what a
 * step stage's row shows, and the key a stage names its ApplicationSet by. The rules are in
 * reduce/reduce-appset.ts.
 */
import type { StageConfig } from '../../config/file.js';
import { targetKey, type TargetRef } from '../../facts/fact.js';

export interface AppSetMemberState {
  /** Waiting | Pending | Progressing | Healthy (the ApplicationSet controller's word). */
  status: string;
  /** 1-based step as a string; "-1": no step selects the child. */
  step: string;
  targetRevisions: string[];
  message?: string;
  /** The entry's lastTransitionTime (the ApplicationSet controller's clock). */
  since?: string;
}

export interface AppSetState {
  ref: TargetRef;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  heardAt: number;
  stepCount?: number;
  /** By Application name. */
  members: Record<string, AppSetMemberState>;
}

/** A step stage's row: its step, its members, and how many are done at the release's revision. */
export interface StepProgress {
  step?: number;
  stepCount?: number;
  /** False until the ApplicationSet was heard: membership is then a guess, and the stage is never Healthy. */
  known: boolean;
  members: number;
  /** Members Healthy in the ApplicationSet's status at their own revisions, and their Applications Healthy and Synced there. */
  done: number;
  /** Members whose child moved on to a newer release (counted in `done` when they were done here when they left). */
  movedOn?: number;
  /** The one revision every member heard is at, when they share one (else `revisions`). */
  revision?: string;
  /** Each member's own revisions (at most ten), when they are not one shared revision: several sources, or a source per child. */
  revisions?: { application: string; revisions: string[] }[];
  /** Members whose Applications still report a previous spec (argo-cd#29410): at most ten named, and how many in all. */
  comparing?: { named: string[]; count: number };
  /** Set while a later step started before this stage's step was done at the revision (the stale-cache fault). */
  outOfOrder?: string;
  /**
   * Set while a later step looks started before an earlier one was done, on evidence older than
   * the start (a reordered delivery looks the same): the row says it waits for confirmation, and
   * nothing fails yet.
   */
  unconfirmed?: string;
  /**
   * On the first stage naming the ApplicationSet: when (fact time) each out-of-order condition was
   * first seen, by the step that started, for the grace period. Dropped when the condition clears.
   */
  orderSeenAt?: Record<string, number>;
}

/** One child a reply about an out-of-order step names, with what each source says about it. */
export interface OutOfOrderMember {
  application: string;
  step: string;
  /** The ApplicationSet's status for the child. */
  status: string;
  /** The revisions the ApplicationSet says the child targets. */
  targets: string[];
  /** The child's own revisions in this release (what its Application was compared against), when heard. */
  own?: string[];
  /** What the Application itself last said (sync/health at revision), when heard. */
  observed?: string;
}

export interface OutOfOrderDetail {
  appSet: string;
  /** The step that started, and the earlier steps that were not Healthy at the revision. */
  startedStep: number;
  behindSteps: number[];
  /** The one revision every child named is at, when they share one; else each line says its own. */
  revision?: string;
  started: OutOfOrderMember[];
  behind: OutOfOrderMember[];
  /** How many more of each were left out (bounded detail). */
  moreStarted: number;
  moreBehind: number;
}

/** The ApplicationSet a stage names, as a target key (undefined: not an applicationSet stage). */
export function appSetKeyOfStage(stage: StageConfig): string | undefined {
  const sel = stage.applicationSet;
  return sel ? targetKey({ kind: 'ApplicationSet', cluster: stage.cluster, namespace: sel.namespace, name: sel.name }) : undefined;
}
