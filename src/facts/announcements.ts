/**
 * What CI announced about a release is fixed once announced: a later announcement may repeat
 * it (idempotent) but not change the images, commit, author or pull-request link. Decided at
 * ingest, so the caller gets a 409 instead of a 202 whose fact is dropped later: the first
 * announcement claims a Redis key with SET NX (atomic, so two racing announcements cannot both
 * win), and every later one is compared with what the key holds. The key lives as long as a
 * release record can (the longest release TTL), refreshed by every agreeing announcement.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';
import type { AnnouncedDetails, ReleaseAnnouncedFact } from './fact.js';

export type ClaimOutcome = { kind: 'new'; release: () => Promise<void> } | { kind: 'same' } | { kind: 'conflict'; fields: (keyof AnnouncedDetails)[] };

/* KEYS[1] claim; ARGV[1] details JSON, ARGV[2] TTL ms. Returns {1} when claimed, else {0, stored JSON}. */
const CLAIM_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return {1} end
return {0, redis.call('GET', KEYS[1])}
`;
/* Gives a claim back only if it still holds what this request claimed. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type RedisWithScripts = Redis & {
  glidepathClaimAnnouncement(key: string, details: string, ttlMs: string): Promise<[1] | [0, string]>;
  glidepathReleaseAnnouncement(key: string, details: string): Promise<number>;
};

const FIELDS = ['images', 'commit', 'pullRequestUrl', 'author', 'authorSlackId', 'mergedBySlackId'] as const;

/** Fields the new announcement would change. One it leaves out changes nothing (the reducer keeps what it has). */
export function changedFields(stored: AnnouncedDetails, next: AnnouncedDetails): (keyof AnnouncedDetails)[] {
  return FIELDS.filter((f) => {
    const value = next[f];
    if (value === undefined) return false;
    return JSON.stringify(value) !== JSON.stringify(stored[f]);
  });
}

/**
 * Where an accepted announcement's images are indexed, so a Kargo Freight with the same images
 * joins its release (the worker's store, src/releases/store/kargo-index.ts `AnnouncedImages`).
 */
export interface ImagesAnnounced {
  record(pipeline: string, images: readonly string[], releaseId: string): Promise<void>;
}

export class AnnouncementClaims {
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly ttlMs: number,
    /** Where an accepted announcement's images are indexed, so a Kargo Freight carrying them joins its release. */
    private readonly images?: ImagesAnnounced,
  ) {
    if (!('glidepathClaimAnnouncement' in redis)) {
      redis.defineCommand('glidepathClaimAnnouncement', { numberOfKeys: 1, lua: CLAIM_SCRIPT });
      redis.defineCommand('glidepathReleaseAnnouncement', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    }
    this.redis = redis as RedisWithScripts;
  }

  async claim(fact: ReleaseAnnouncedFact): Promise<ClaimOutcome> {
    const key = this.keys.announcement(fact.pipeline, fact.releaseId);
    // The images are sorted once, at normalisation (normaliseAnnouncement).
    const details: AnnouncedDetails = { images: fact.images, commit: fact.commit, pullRequestUrl: fact.pullRequestUrl, author: fact.author, authorSlackId: fact.authorSlackId, mergedBySlackId: fact.mergedBySlackId };
    const json = JSON.stringify(details);
    const claim = await this.redis.glidepathClaimAnnouncement(key, json, String(Math.round(this.ttlMs)));
    if (claim[0] === 1) {
      await this.images?.record(fact.pipeline, details.images, fact.releaseId);
      return { kind: 'new', release: async () => void (await this.redis.glidepathReleaseAnnouncement(key, json)) };
    }
    // SET NX and GET run in one script: when the SET did not take, the GET found what holds the key.
    const fields = changedFields(JSON.parse(claim[1]) as AnnouncedDetails, details);
    if (fields.length > 0) return { kind: 'conflict', fields };
    await this.redis.pexpire(key, Math.round(this.ttlMs));
    await this.images?.record(fact.pipeline, details.images, fact.releaseId);
    return { kind: 'same' };
  }
}
