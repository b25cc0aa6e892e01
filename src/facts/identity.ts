/**
 * Deterministic job ids: one observation of an object is one queue job, however it arrived: the
 * same notification delivered twice (the webhook client retries up to three times), two triggers
 * that fired on the same object version, or the same version seen by the watch source and by a
 * webhook. An identity is the observation itself (object, version, state), not how it came.
 * Heartbeats are the exception: the same observation again, meant to refresh "last heard", so
 * their send time is part of their identity.
 */
import { createHash } from 'node:crypto';
import { targetKey, type Fact } from './fact.js';

/** What the watch source calls its facts: a change it was told of, each object of a (re)list, a Kargo Stage that left. */
export const WATCH_EVENT = 'watch';
export const WATCH_RESYNC_EVENT = 'watch-resync';
/** A Kargo Stage left a watch (deleted, no longer matching its selector, or missing from a relist). */
export const WATCH_DELETED_EVENT = 'watch-deleted';

/** Events that repeat an observation on purpose: the heartbeat trigger, and each list of the watch source. */
export const HEARTBEAT_EVENTS: ReadonlySet<string> = new Set(['on-glidepath-heartbeat', WATCH_RESYNC_EVENT]);

function sentIdentity(fact: { event: string; sentAt?: number }): unknown {
  return HEARTBEAT_EVENTS.has(fact.event) ? fact.sentAt : null;
}

export function factIdentity(fact: Fact, releaseIdAnnotations: readonly string[] = []): string {
  let parts: unknown[];
  switch (fact.kind) {
    case 'rollout': {
      const r = fact.rollout;
      parts = [
        targetKey(fact.target), r.uid, r.generation, r.resourceVersion, r.phase, r.step?.index, r.podHash,
        releaseIdAnnotations.map((a) => r.annotations[a] ?? ''), sentIdentity(fact),
      ];
      break;
    }
    case 'application': {
      const a = fact.application;
      parts = [
        targetKey(fact.target), a.uid, a.generation, a.resourceVersion, a.operation?.phase, a.operation?.startedAt,
        a.operation?.finishedAt, a.operation?.retryCount, a.revisions, a.health?.status, a.syncStatus, releaseIdAnnotations.map((k) => a.annotations[k] ?? ''), sentIdentity(fact),
      ];
      break;
    }
    case 'application-set': {
      const a = fact.appSet;
      // The members' progress is the observation; a status write always bumps the resourceVersion too.
      const members = createHash('sha256').update(JSON.stringify(a.members.map((m) => [m.application, m.status, m.step, m.targetRevisions]))).digest('hex');
      parts = [targetKey(fact.target), a.uid, a.generation, a.resourceVersion, a.stepCount, members, sentIdentity(fact)];
      break;
    }
    case 'kargo-stage':
      parts = [targetKey(fact.target), fact.stage.uid, fact.stage.generation, fact.stage.resourceVersion, fact.removed?.from, sentIdentity(fact)];
      break;
    case 'kargo-promotion':
      parts = [targetKey(fact.target), fact.uid, fact.promotion.name, fact.promotion.resourceVersion, fact.promotion.phase, sentIdentity(fact)];
      break;
    case 'kargo-freight':
      parts = [fact.cluster, fact.namespace, fact.freight.name, fact.uid, fact.resourceVersion, sentIdentity(fact)];
      break;
    case 'release':
      // The Slack ids only when given, so an announcement without them keeps the id it always had.
      parts = [fact.pipeline, fact.releaseId, fact.images, fact.commit, fact.pullRequestUrl, fact.author, ...(fact.authorSlackId || fact.mergedBySlackId ? [fact.authorSlackId, fact.mergedBySlackId] : [])];
      break;
    case 'watchdog':
      parts = [fact.pipeline, fact.releaseId, fact.silentSince, ...(fact.recheck ? ['recheck'] : [])];
      break;
    case 'superseded':
      parts = [fact.pipeline, fact.releaseId, targetKey(fact.target), fact.byReleaseId, fact.at];
      break;
    case 'rejection':
      parts = [fact.pipeline, fact.releaseId, fact.stage, fact.what, fact.by, fact.reason, fact.overriddenBy, fact.receivedAt];
      break;
  }
  // BullMQ job ids must not contain ':' nor be all digits.
  return `${fact.kind}-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32)}`;
}
