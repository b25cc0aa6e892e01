/**
 * Every Redis key Glidepath uses is built here. All keys share one hash tag (the prefix, e.g.
 * `{glidepath}`), so multi-key scripts and BullMQ work unchanged on Redis Cluster.
 */
import { isWellFormed } from '../model/unicode.js';

/**
 * Release ids and pipeline names can hold `:` or spaces; keys stay unambiguous. Total for any
 * string: `encodeURIComponent` throws on a lone surrogate (a fact that could never be stored
 * would be retried and dropped), so a string that is not well-formed Unicode is written as `$`
 * and the hex of its UTF-16 units instead. `$` is always escaped by `encodeURIComponent`, so
 * the two forms never collide, and well-formed strings keep the keys they always had.
 */
export function keyPart(value: string): string {
  if (isWellFormed(value)) return encodeURIComponent(value);
  let hex = '$';
  for (let i = 0; i < value.length; i++) hex += value.charCodeAt(i).toString(16).padStart(4, '0');
  return hex;
}
const part = keyPart;

export interface Keys {
  readonly prefix: string;
  /** Hash: `v` (version), `data` (record JSON), `outbox` (undispatched effects JSON). */
  release(pipeline: string, releaseId: string): string;
  /** Sorted set of release ids of a pipeline, scored by last update time (ms). */
  releaseIndex(pipeline: string): string;
  /** Hash: target key → release id the target currently runs, per pipeline. */
  targetReleases(pipeline: string): string;
  /** Hash per Argo CD Application (`cluster/namespace/name`): `pipeline/stage` → release id of the Rollouts it manages. */
  applicationTargets(application: string): string;
  /** Stream: the append-only audit log of every action attempted through Glidepath. */
  audit(): string;
  /** Hash of the Slack thread of a release: `channel`, `ts`, `rendered` (digest of the parent last sent), `version`. */
  slackThread(pipeline: string, releaseId: string): string;
  /** String lock held while a worker posts the parent message of a thread (exactly one parent). */
  slackThreadLock(pipeline: string, releaseId: string): string;
  /** Set of thread.reply effect ids already posted in the thread. */
  slackReplies(pipeline: string, releaseId: string): string;
  /** String held while one worker posts one reply (two dispatches of the same effect post it once). */
  slackReplyClaim(pipeline: string, releaseId: string, effectId: string): string;
  /** String: the Slack user id of the first of two approvers of one object at one generation and step. */
  firstApproval(object: string): string;
  /** Hash of a Slack rate budget (token bucket): `tokens` and the time `at` they were counted. */
  slackBudget(name: string): string;
  /** String with a TTL of the replay window: a Slack request signature already received (replays are refused). */
  slackSeenRequest(signature: string): string;
  /**
   * Hash of one post (a thread parent, effect id `parent`, or a reply) that may have reached Slack
   * without us seeing the answer: `since` (ms of the first such attempt), `maybe` ("1" while an
   * attempt is unaccounted for). Deleted once the post is known; expires on its own.
   */
  slackPostAttempt(pipeline: string, releaseId: string, effectId: string): string;
  /** Sorted set of Slack job ids retrying after failures, scored by the time the first failure was seen. */
  slackRetrying(): string;
  /** String with a TTL: the id of the replica that watches a cluster (one watcher per cluster). */
  watchLease(cluster: string): string;
  /** String (with TTL): the details of a release as CI first announced them; later announcements must agree. */
  announcement(pipeline: string, releaseId: string): string;
  /** Counter (expires with its minute): denied attempts of one Slack user audited in the current minute. */
  auditDeniedCount(slackUserId: string): string;
  /**
   * Sorted set per cluster object (`cluster/namespace/name`), scored by time: the actions Glidepath
   * itself sent to it (`resume:<podHash>:<step>` or `abort:<podHash>`, then a newline and the Slack
   * user), written before the patch, so the reducer can tell them from changes made outside Glidepath.
   */
  ownActions(target: string): string;
  /** Hash per release: effect id → Slack ts of a reply with buttons, and `settled:<effect id>` → why its buttons went. */
  slackReplyMessages(pipeline: string, releaseId: string): string;
}

export function createKeys(prefix: string): Keys {
  return {
    prefix,
    release: (pipeline, releaseId) => `${prefix}:release:${part(pipeline)}:${part(releaseId)}`,
    releaseIndex: (pipeline) => `${prefix}:releases:${part(pipeline)}`,
    targetReleases: (pipeline) => `${prefix}:target-releases:${part(pipeline)}`,
    applicationTargets: (application) => `${prefix}:application-targets:${part(application)}`,
    audit: () => `${prefix}:audit`,
    slackThread: (pipeline, releaseId) => `${prefix}:slack-thread:${part(pipeline)}:${part(releaseId)}`,
    slackThreadLock: (pipeline, releaseId) => `${prefix}:slack-thread-lock:${part(pipeline)}:${part(releaseId)}`,
    slackReplies: (pipeline, releaseId) => `${prefix}:slack-replies:${part(pipeline)}:${part(releaseId)}`,
    slackReplyClaim: (pipeline, releaseId, effectId) => `${prefix}:slack-reply-claim:${part(pipeline)}:${part(releaseId)}:${part(effectId)}`,
    firstApproval: (object) => `${prefix}:first-approval:${part(object)}`,
    slackBudget: (name) => `${prefix}:slack-budget:${part(name)}`,
    slackSeenRequest: (signature) => `${prefix}:slack-seen-request:${part(signature)}`,
    slackPostAttempt: (pipeline, releaseId, effectId) => `${prefix}:slack-post-attempt:${part(pipeline)}:${part(releaseId)}:${part(effectId)}`,
    slackRetrying: () => `${prefix}:slack-retrying`,
    watchLease: (cluster) => `${prefix}:watch-lease:${part(cluster)}`,
    announcement: (pipeline, releaseId) => `${prefix}:announcement:${part(pipeline)}:${part(releaseId)}`,
    auditDeniedCount: (slackUserId) => `${prefix}:audit-denied:${part(slackUserId)}`,
    ownActions: (target) => `${prefix}:own-actions:${part(target)}`,
    slackReplyMessages: (pipeline, releaseId) => `${prefix}:slack-reply-messages:${part(pipeline)}:${part(releaseId)}`,
  };
}
