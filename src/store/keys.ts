/**
 * Every Redis key Glidepath uses is built here, under one namespace (REDIS_PREFIX), in one of
 * two layouts:
 *
 * - sharded (a plain namespace such as `glidepath`): keys carry Redis Cluster hash tags of
 *   their own, so the work spreads over the shards. Every key of one pipeline is tagged with
 *   the pipeline (`glidepath:release:{checkout}:r-1`: the record, its index, target index, Slack
 *   thread state, all in one slot, so the scripts and MULTIs touching several of them stay
 *   legal), each fact partition's BullMQ queue with a tag of its own chosen to spread the
 *   partitions over the slot space (`glidepath:{p3.1}:facts:wait`), the audit stream and its
 *   counters with `{audit}`.
 * - one slot (a namespace that is itself a hash tag, `{glidepath}`): the tag is the namespace,
 *   so every key is in one slot. The layout of Glidepath before partitions (keys unchanged).
 */
import { isWellFormed } from '../model/unicode.js';
import { SLOTS, hashTagOf, keySlot } from './slot.js';

/**
 * Version of the key layout; stored in Redis with the partition count (see layout.ts), and a
 * process refuses to start against another one. Bump it with any change to the keys below.
 */
export const KEY_LAYOUT_VERSION = 2;

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
  /** The namespace every key starts with (REDIS_PREFIX). */
  readonly prefix: string;
  /** Whether keys carry hash tags of their own (a plain namespace) or share the namespace's one slot. */
  readonly sharded: boolean;
  /** Number of fact partitions (FACT_PARTITIONS). */
  readonly partitions: number;
  /** BullMQ prefix of the facts queue of one partition (all its keys in one slot). */
  factQueuePrefix(partition: number): string;
  /**
   * String with a TTL (FACT_DEDUPE_MS), in the slot of the partition's queue: the batch job that
   * claimed a fact's identity. A repeat in another job within the TTL is not reduced again.
   */
  factSeen(partition: number, identity: string): string;
  /** Counter, in the slot of the partition's queue: facts added to it and not yet taken by a worker (ingest's backpressure). */
  factsWaiting(partition: number): string;
  /** String with a TTL, in the slot of the partition's queue: a batch job was taken once (its facts are off factsWaiting). */
  factJobTaken(partition: number, jobId: string): string;
  /** BullMQ prefix of the watchdog and Slack queues. */
  queuePrefix(queue: 'watchdog' | 'slack'): string;
  /** String with a short TTL in the slot of a queue (its BullMQ prefix): /readyz writes it to prove the queue's shard takes writes. */
  writeProbe(queuePrefix: string): string;
  /** String (JSON): the key layout version and partition count the data under this namespace was written with. */
  layout(): string;
  /** Sorted set: reducer replicas alive, scored by their last heartbeat (ms). */
  reducerReplicas(): string;
  /** String with a TTL: the replica that works one fact partition. */
  partitionLease(partition: number): string;
  /**
   * String with a TTL, in the slot of partitionLease: the fencing epoch of the partition's lease,
   * raised by every acquisition (lease.ts ACQUIRE). The record a holder saves keeps the highest
   * epoch that wrote it, and refuses a lower one (store.ts).
   */
  partitionLeaseEpoch(partition: number): string;
  /** Sorted set of the release ids of a pipeline that are not finished, scored like releaseIndex. */
  openReleaseIndex(pipeline: string): string;
  /** String with a TTL: digest of the Slack channels last found usable (conversations.info once per deployment). */
  slackChannelsChecked(): string;
  /** Hash with a TTL (a day, renewed on each write): pipeline → the channel problem Slack last reported for it (src/slack/channel-problems.ts). */
  slackChannelProblems(): string;
  /**
   * Hash with a TTL (renewed on each write, the longest release TTL): the pipelines templates
   * generated, by name, as the template and group that fill them (src/routing/shared-catalog.ts);
   * retired ones are pruned once their threads have expired.
   */
  generatedPipelines(): string;
  /** Counter in the same slot as generatedPipelines, bumped on each change: replicas reload when it moves. */
  generatedPipelinesVersion(): string;
  /** Hash: `v` (version), `data` (record JSON), `outbox` (undispatched effects JSON). */
  release(pipeline: string, releaseId: string): string;
  /** Sorted set of release ids of a pipeline, scored by last update time (ms). */
  releaseIndex(pipeline: string): string;
  /** Hash: target key → release id the target currently runs, per pipeline. */
  targetReleases(pipeline: string): string;
  /**
   * String per pipeline: bumped with every write of its target index (in the same transaction), so
   * a reader that kept what the index said can tell it still says so. Expires the longest a release
   * lives after its last bump, as the index does.
   */
  targetReleasesVersion(pipeline: string): string;
  /**
   * Hash (with TTL, the longest a release lives) per pipeline and ApplicationSet it names: `v` (the
   * observation: uid, generation, resourceVersion) and `state` (the latest step membership and
   * progress heard), so a release opened after the ApplicationSet was heard starts from it.
   */
  appSetMembership(pipeline: string, appSet: string): string;
  /**
   * Hash (with TTL, the longest a release lives) per pipeline and ApplicationSet: the routing index
   * of its rollouts (appset-rollouts.ts): `ids` (the last few rollouts, newest last), `at:<id>` (when
   * each opened, ms), `m:<id>\n<child>` (the desired revisions the child joined that rollout with).
   */
  appSetRollouts(pipeline: string, appSet: string): string;
  /** String (with TTL, the longest a release lives): the ApplicationSet rollout a child's commit (12 hex) was routed to, so a later CI announcement of it joins that rollout. */
  rolloutOfCommit(pipeline: string, commit: string): string;
  /** String (with TTL, the longest a release lives): the release id CI announced for a commit (12 hex), so the ApplicationSet rollout the commit opens later is that release. */
  announcedCommit(pipeline: string, commit: string): string;
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
  /**
   * List with a TTL: the Slack user ids who approved one state of an object (object, generation or
   * revision, pod hash or Freight, step), in order; `!reached` last once the quorum was met and acted on.
   */
  approvalTally(state: string): string;
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
  /** String with a TTL, in the slot of watchLease: the fencing epoch of the cluster's watch lease. */
  watchLeaseEpoch(cluster: string): string;
  /** String (with TTL): the details of a release as CI first announced them; later announcements must agree. */
  announcement(pipeline: string, releaseId: string): string;
  /**
   * String (with TTL, the longest a release lives): the release id CI announced for exactly these
   * images (`digest`: of the sorted image refs), so a Kargo Freight carrying them joins that release.
   */
  announcedImages(pipeline: string, digest: string): string;
  /**
   * String (with TTL, the longest a release lives): the `freight-` release opened for a Freight with
   * exactly these images before any CI announcement of them, so a later announcement joins it.
   */
  freightImages(pipeline: string, digest: string): string;
  /** String (with TTL, the longest a release lives): the release a CI release id was announced into (a `freight-` release that adopted it). */
  releaseAlias(pipeline: string, releaseId: string): string;
  /** Counter (expires with its minute): denied attempts of one Slack user audited in the current minute. */
  auditDeniedCount(slackUserId: string): string;
  /**
   * Sorted set per cluster object (`cluster/namespace/name`), scored by time: the actions Glidepath
   * itself sent to it (`resume:<podHash>:<step>` or `abort:<podHash>`, then a newline and the Slack
   * user), written before the patch, so the reducer can tell them from changes made outside Glidepath.
   */
  ownActions(target: string): string;
  /**
   * String (JSON) with a TTL per rejected state (the state an approval would act on: object,
   * generation, pod hash and step; an ApplicationSet step at its revision; a Kargo Stage): who
   * rejected it and why (src/actions/rejections.ts).
   */
  rejection(state: string): string;
  /** Hash per release: effect id → Slack ts of a reply with buttons, and `settled:<effect id>` → why its buttons went. */
  slackReplyMessages(pipeline: string, releaseId: string): string;
  /**
   * Hash per pipeline and UTC day (`YYYY-MM-DD`), expiring 32 days after its day: the delivery
   * counters of that day and up to DURATIONS_PER_DAY lead and recovery times (delivery-stats.ts).
   */
  deliveryDay(pipeline: string, day: string): string;
  /** Hash per release with a TTL (32 days from its last write): the delivery events already counted for it (each once). */
  deliveryCounted(pipeline: string, releaseId: string): string;
  /** String with a TTL (32 days): when the pipeline's earliest failure not yet followed by a Complete release happened (ms). */
  deliveryOpenFailure(pipeline: string): string;
}

/** A namespace in braces is itself a hash tag: the one-slot layout. */
export function isOneSlotNamespace(namespace: string): boolean {
  return /^\{[^{}]+\}$/.test(namespace);
}

/**
 * The hash tag of partition `p` of `k`: the first of `p<p>.0`, `p<p>.1`, … whose slot lies in
 * the p-th k-th of the slot space. Redis Cluster gives each master a contiguous share of the
 * slots, so k partitions land on the shards in proportion to the slots each one holds,
 * instead of wherever k random hashes happen to fall (6 random tags over 3 shards are often 4-1-1).
 */
export function partitionTag(p: number, k: number): string {
  for (let n = 0; ; n++) {
    const tag = `p${p}.${n}`;
    if (Math.floor((keySlot(tag) * k) / SLOTS) === p) return tag;
  }
}

/**
 * A key under `prefix` in the same Redis Cluster slot as `key`: `key` with a suffix when it
 * carries a hash tag (the one-slot layout), else with `key` itself as the tag (an untagged key's
 * slot is the hash of the whole key). A lease and its epoch are read and written by one script,
 * which Redis Cluster allows only within one slot; the lease keys keep their names, so a
 * rolling upgrade never sees two keys for one lease.
 */
export function sameSlotKey(prefix: string, key: string, suffix: string): string {
  return hashTagOf(key) !== key ? `${key}:${suffix}` : `${prefix}:{${key}}:${suffix}`;
}

export function createKeys(prefix: string, options: { partitions?: number } = {}): Keys {
  const sharded = !isOneSlotNamespace(prefix);
  const partitions = options.partitions ?? 1;
  /** The pipeline part of a key: tagged in the sharded layout, so a pipeline's keys share one slot. */
  const pl = (pipeline: string) => (sharded ? `{${part(pipeline)}}` : part(pipeline));
  const tags = Array.from({ length: partitions }, (_, p) => partitionTag(p, partitions));
  const factQueuePrefix = (p: number) => {
    if (!Number.isInteger(p) || p < 0 || p >= partitions) throw new RangeError(`fact partition ${p} is not one of 0..${partitions - 1}`);
    if (sharded) return `${prefix}:{${tags[p] as string}}`;
    return partitions === 1 ? prefix : `${prefix}:p${p}`;
  };
  return {
    prefix,
    sharded,
    partitions,
    factQueuePrefix,
    factSeen: (p, identity) => `${factQueuePrefix(p)}:fact-seen:${part(identity)}`,
    factsWaiting: (p) => `${factQueuePrefix(p)}:facts-waiting`,
    factJobTaken: (p, jobId) => `${factQueuePrefix(p)}:fact-job-taken:${part(jobId)}`,
    queuePrefix: (queue) => (sharded ? `${prefix}:{${queue}}` : prefix),
    writeProbe: (queuePrefix) => `${queuePrefix}:write-probe`,
    layout: () => `${prefix}:layout`,
    reducerReplicas: () => `${prefix}:reducer-replicas`,
    partitionLease: (p) => `${prefix}:partition-lease:${p}`,
    partitionLeaseEpoch: (p) => sameSlotKey(prefix, `${prefix}:partition-lease:${p}`, 'epoch'),
    release: (pipeline, releaseId) => `${prefix}:release:${pl(pipeline)}:${part(releaseId)}`,
    releaseIndex: (pipeline) => `${prefix}:releases:${pl(pipeline)}`,
    openReleaseIndex: (pipeline) => `${prefix}:open-releases:${pl(pipeline)}`,
    targetReleases: (pipeline) => `${prefix}:target-releases:${pl(pipeline)}`,
    targetReleasesVersion: (pipeline) => `${prefix}:target-releases-version:${pl(pipeline)}`,
    appSetMembership: (pipeline, appSet) => `${prefix}:appset-membership:${pl(pipeline)}:${part(appSet)}`,
    appSetRollouts: (pipeline, appSet) => `${prefix}:appset-rollouts:${pl(pipeline)}:${part(appSet)}`,
    rolloutOfCommit: (pipeline, commit) => `${prefix}:rollout-of-commit:${pl(pipeline)}:${part(commit)}`,
    announcedCommit: (pipeline, commit) => `${prefix}:announced-commit:${pl(pipeline)}:${part(commit)}`,
    applicationTargets: (application) => `${prefix}:application-targets:${part(application)}`,
    // The audit stream and its per-person counters are written by one script: one slot.
    audit: () => (sharded ? `${prefix}:{audit}` : `${prefix}:audit`),
    slackThread: (pipeline, releaseId) => `${prefix}:slack-thread:${pl(pipeline)}:${part(releaseId)}`,
    slackThreadLock: (pipeline, releaseId) => `${prefix}:slack-thread-lock:${pl(pipeline)}:${part(releaseId)}`,
    slackReplies: (pipeline, releaseId) => `${prefix}:slack-replies:${pl(pipeline)}:${part(releaseId)}`,
    slackReplyClaim: (pipeline, releaseId, effectId) => `${prefix}:slack-reply-claim:${pl(pipeline)}:${part(releaseId)}:${part(effectId)}`,
    approvalTally: (state) => `${prefix}:approval-tally:${part(state)}`,
    slackBudget: (name) => `${prefix}:slack-budget:${part(name)}`,
    slackSeenRequest: (signature) => `${prefix}:slack-seen-request:${part(signature)}`,
    slackPostAttempt: (pipeline, releaseId, effectId) => `${prefix}:slack-post-attempt:${pl(pipeline)}:${part(releaseId)}:${part(effectId)}`,
    slackRetrying: () => `${prefix}:slack-retrying`,
    slackChannelsChecked: () => `${prefix}:slack-channels-checked`,
    slackChannelProblems: () => `${prefix}:slack-channel-problems`,
    generatedPipelines: () => `${prefix}:generated-pipelines`,
    generatedPipelinesVersion: () => sameSlotKey(prefix, `${prefix}:generated-pipelines`, 'version'),
    watchLease: (cluster) => `${prefix}:watch-lease:${part(cluster)}`,
    watchLeaseEpoch: (cluster) => sameSlotKey(prefix, `${prefix}:watch-lease:${part(cluster)}`, 'epoch'),
    announcement: (pipeline, releaseId) => `${prefix}:announcement:${pl(pipeline)}:${part(releaseId)}`,
    announcedImages: (pipeline, digest) => `${prefix}:announced-images:${pl(pipeline)}:${part(digest)}`,
    freightImages: (pipeline, digest) => `${prefix}:freight-images:${pl(pipeline)}:${part(digest)}`,
    releaseAlias: (pipeline, releaseId) => `${prefix}:release-alias:${pl(pipeline)}:${part(releaseId)}`,
    auditDeniedCount: (slackUserId) => `${prefix}:audit-denied:${sharded ? '{audit}:' : ''}${part(slackUserId)}`,
    ownActions: (target) => `${prefix}:own-actions:${sharded ? '{own-actions}:' : ''}${part(target)}`,
    rejection: (state) => `${prefix}:rejection:${sharded ? '{rejections}:' : ''}${part(state)}`,
    slackReplyMessages: (pipeline, releaseId) => `${prefix}:slack-reply-messages:${pl(pipeline)}:${part(releaseId)}`,
    deliveryDay: (pipeline, day) => `${prefix}:delivery-day:${pl(pipeline)}:${part(day)}`,
    deliveryCounted: (pipeline, releaseId) => `${prefix}:delivery-counted:${pl(pipeline)}:${part(releaseId)}`,
    deliveryOpenFailure: (pipeline) => `${prefix}:delivery-open-failure:${pl(pipeline)}`,
  };
}
