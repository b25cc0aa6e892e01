/**
 * Deterministic job ids: the same notification delivered twice (the webhook client retries up
 * to three times) becomes one queue job. Heartbeats carry a new `sentAt`, so they are kept.
 */
import { createHash } from 'node:crypto';
import { targetKey, type Fact } from './fact.js';

export function factIdentity(fact: Fact, releaseIdAnnotations: readonly string[] = []): string {
  let parts: unknown[];
  switch (fact.kind) {
    case 'rollout': {
      const r = fact.rollout;
      parts = [
        targetKey(fact.target), r.uid, r.generation, r.resourceVersion, r.phase, r.step?.index, r.podHash,
        releaseIdAnnotations.map((a) => r.annotations[a] ?? ''), fact.event, fact.sentAt,
      ];
      break;
    }
    case 'application': {
      const a = fact.application;
      parts = [
        targetKey(fact.target), a.uid, a.generation, a.resourceVersion, a.operation?.phase, a.operation?.startedAt,
        a.operation?.finishedAt, a.revisions, releaseIdAnnotations.map((k) => a.annotations[k] ?? ''), fact.event, fact.sentAt,
      ];
      break;
    }
    case 'release':
      parts = [fact.pipeline, fact.releaseId, fact.images, fact.commit, fact.pullRequestUrl, fact.author];
      break;
    case 'watchdog':
      parts = [fact.pipeline, fact.releaseId, fact.silentSince];
      break;
    case 'superseded':
      parts = [fact.pipeline, fact.releaseId, targetKey(fact.target), fact.byReleaseId, fact.at];
      break;
  }
  // BullMQ job ids must not contain ':' nor be all digits.
  return `${fact.kind}-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32)}`;
}
