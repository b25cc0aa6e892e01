/** The "slack" queue's jobs: what they carry, how they are named, in which order they run. */
import { createHash } from 'node:crypto';
import { REPLIES_NEEDING_A_PERSON, type ReleaseStatus } from '../../releases/record/record.js';
import type { ThreadReplyEffect, ThreadSettleEffect } from '../render/types.js';
import type { RetryState } from './retry.js';

export const SLACK_QUEUE = 'slack';

/** A budget slot the job booked before it was delayed: on waking it sends without booking again. */
export interface BookedSlot {
  budget: string;
  at: number;
}

/** Re-render the parent from the latest stored record (so whatever runs last sends the latest state). */
export interface ParentJob {
  type: 'parent';
  pipeline: string;
  releaseId: string;
  slot?: BookedSlot;
  /** Set while the job retries after failures Slack may recover from. */
  retry?: RetryState;
  /** Edit even when the digest says Slack shows this render: a fenced writer's edit may have landed over a newer one. */
  force?: boolean;
}

/**
 * Replies to post in this order. A reply a person waits on travels alone at the highest
 * priority; routine replies of one saved record travel together, so they read in the order the
 * reducer emitted them ("prod is Healthy" before "release complete").
 */
export interface ReplyJob {
  type: 'reply';
  pipeline: string;
  releaseId: string;
  effects: ThreadReplyEffect[];
  /** The saved record that emitted the replies: a reply posted after the thread showed a later end is marked late (late-reply.ts). Absent in jobs queued before it existed. */
  produced?: ReplyProduced;
  slot?: BookedSlot;
  /** Set while the job retries after failures Slack may recover from. */
  retry?: RetryState;
}

/** The record a reply job was produced from, as it was saved. */
export interface ReplyProduced {
  version: number;
  status: ReleaseStatus;
  /** The record's updatedAt: when what the replies say happened, as the reducer knows it. */
  at: number;
}

/** Settle replies whose pause is over: each loses its buttons and says how the pause ended. */
export interface SettleJob {
  type: 'settle';
  pipeline: string;
  releaseId: string;
  effects: ThreadSettleEffect[];
  slot?: BookedSlot;
  retry?: RetryState;
}

/**
 * The charts of a posted reply's failing analysis metrics, uploaded into its thread
 * (chart-upload.ts). Its own job, queued once the reply is posted: a failed upload retries alone
 * and never posts the reply again.
 */
export interface ChartJob {
  type: 'chart';
  pipeline: string;
  releaseId: string;
  effect: ThreadReplyEffect;
  /** The release timeline (release-timeline.ts), once per release, drawn from the record when the job runs; `effect` is the reply that ended the release. */
  timeline?: true;
  slot?: BookedSlot;
  retry?: RetryState;
}

export type SlackJob = ParentJob | ReplyJob | SettleJob | ChartJob;

/** BullMQ priorities: lower runs first. */
/**
 * Lower runs first. Settling an old reply (its buttons go once its pause is over) comes last: a
 * click on a stale button is refused with what changed anyway, and in a storm those edits would
 * otherwise take the chat.update budget the parents need.
 */
export const PRIORITY = { replyNeedingPerson: 1, reply: 2, parent: 3, chart: 3, settle: 4 } as const;

export function needsPerson(effect: ThreadReplyEffect): boolean {
  return effect.needsPerson || REPLIES_NEEDING_A_PERSON.includes(effect.kind);
}

/** BullMQ ids may not contain ':' nor be all digits; a digest is neither. */
function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

export function replyJobId(pipeline: string, releaseId: string, effectIds: readonly string[]): string {
  return `reply-${digest(pipeline, releaseId, ...effectIds)}`;
}

export function chartJobId(pipeline: string, releaseId: string, effectId: string): string {
  return `chart-${digest(pipeline, releaseId, effectId)}`;
}

export function settleJobId(pipeline: string, releaseId: string, effectId: string): string {
  return `settle-${digest(pipeline, releaseId, effectId)}`;
}

export function parentDeduplicationId(pipeline: string, releaseId: string): string {
  return `parent-${digest(pipeline, releaseId)}`;
}

/** A forced parent render (ParentJob.force), one per repair. */
export function repairJobId(pipeline: string, releaseId: string, at: number): string {
  return `parent-repair-${digest(pipeline, releaseId, String(at))}`;
}
