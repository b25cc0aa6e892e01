/**
 * Where each release's Slack thread lives: channel and parent ts (so a restart continues the
 * same thread), a digest of the parent last sent (so an unchanged render sends nothing), the
 * replies already posted, and the lock that makes the parent exist exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DEFAULT_UNFINISHED_TTL_MS } from '../../releases/store.js';
import type { Keys } from '../../store/keys.js';
import type { PauseEnd } from '../../releases/record.js';

export interface ThreadRef {
  channel: string;
  ts: string;
  /** Digest of the parent message last sent. */
  rendered?: string;
  /** Record version that digest was rendered from. */
  version?: number;
}

/* KEYS[1] lock; ARGV[1] token. Deletes the lock only if we still hold it. */
const UNLOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/*
 * KEYS[1] thread hash; ARGV[1] digest, ARGV[2] version.
 * Records what the parent shows now, unless a newer record's render was already recorded.
 */
const MARK_RENDERED_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '-1')
if tonumber(ARGV[2]) < current then return 0 end
redis.call('HSET', KEYS[1], 'rendered', ARGV[1], 'version', ARGV[2])
return 1
`;

type RedisWithScripts = Redis & {
  glidepathSlackUnlock(key: string, token: string): Promise<number>;
  glidepathSlackMarkRendered(key: string, digest: string, version: string): Promise<number>;
};

export class ThreadStore {
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    /** How long thread state outlives a finished release. */
    private readonly finishedTtlMs: number,
    /** How long thread state of an unfinished release lives after its last write (as the record). */
    private readonly unfinishedTtlMs: number = DEFAULT_UNFINISHED_TTL_MS,
  ) {
    if (!('glidepathSlackUnlock' in redis)) {
      redis.defineCommand('glidepathSlackUnlock', { numberOfKeys: 1, lua: UNLOCK_SCRIPT });
      redis.defineCommand('glidepathSlackMarkRendered', { numberOfKeys: 1, lua: MARK_RENDERED_SCRIPT });
    }
    this.redis = redis as RedisWithScripts;
  }

  async get(pipeline: string, releaseId: string): Promise<ThreadRef | undefined> {
    const [channel, ts, rendered, version] = await this.redis.hmget(this.keys.slackThread(pipeline, releaseId), 'channel', 'ts', 'rendered', 'version');
    if (!channel || !ts) return undefined;
    return { channel, ts, ...(rendered ? { rendered } : {}), ...(version ? { version: Number(version) } : {}) };
  }

  async saveParent(pipeline: string, releaseId: string, thread: Required<ThreadRef>): Promise<void> {
    const key = this.keys.slackThread(pipeline, releaseId);
    // Bounded from its first write; expireWhenFinished then sets the release's own TTL.
    await this.redis
      .multi()
      .hset(key, { channel: thread.channel, ts: thread.ts, rendered: thread.rendered, version: String(thread.version) })
      .pexpire(key, this.unfinishedTtlMs, 'NX')
      .exec();
  }

  /** The parent was deleted in Slack: the next render starts a new thread. */
  async forget(pipeline: string, releaseId: string): Promise<void> {
    await this.redis.del(this.keys.slackThread(pipeline, releaseId));
  }

  async markRendered(pipeline: string, releaseId: string, digest: string, version: number): Promise<void> {
    await this.redis.glidepathSlackMarkRendered(this.keys.slackThread(pipeline, releaseId), digest, String(version));
  }

  /** Finished releases: thread state expires a while after the record does. */
  async expireWhenFinished(pipeline: string, releaseId: string, finished: boolean): Promise<void> {
    const keys = [this.keys.slackThread(pipeline, releaseId), this.keys.slackReplies(pipeline, releaseId), this.keys.slackReplyMessages(pipeline, releaseId)];
    const pipe = this.redis.pipeline();
    for (const k of keys) {
      pipe.pexpire(k, finished ? this.finishedTtlMs : this.unfinishedTtlMs);
    }
    await pipe.exec();
  }

  /** A lock token when acquired, undefined when another worker holds it. */
  async lock(pipeline: string, releaseId: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const ok = await this.redis.set(this.keys.slackThreadLock(pipeline, releaseId), token, 'PX', ttlMs, 'NX');
    return ok === 'OK' ? token : undefined;
  }

  async unlock(pipeline: string, releaseId: string, token: string): Promise<void> {
    await this.redis.glidepathSlackUnlock(this.keys.slackThreadLock(pipeline, releaseId), token);
  }

  async replied(pipeline: string, releaseId: string, effectId: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.slackReplies(pipeline, releaseId), effectId)) === 1;
  }

  /**
   * Marks the reply posted and drops the claim. A worker that dies between posting and this
   * leaves the claim to expire, and the retry posts again: a rare duplicate, never a lost reply.
   */
  async markReplied(pipeline: string, releaseId: string, effectId: string): Promise<void> {
    await this.redis
      .multi()
      .sadd(this.keys.slackReplies(pipeline, releaseId), effectId)
      // A set made by its first reply gets a TTL at once (NX keeps one set for a finished release).
      .pexpire(this.keys.slackReplies(pipeline, releaseId), this.unfinishedTtlMs, 'NX')
      .del(this.keys.slackReplyClaim(pipeline, releaseId, effectId))
      .exec();
  }

  /** True when this worker may post the reply now; false while another one is posting it. */
  async claimReply(pipeline: string, releaseId: string, effectId: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.slackReplyClaim(pipeline, releaseId, effectId), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async releaseReply(pipeline: string, releaseId: string, effectId: string): Promise<void> {
    await this.redis.del(this.keys.slackReplyClaim(pipeline, releaseId, effectId));
  }

  /** The ts of a posted reply with buttons (to take them away later), and how its pause ended once it did. */
  async replyMessage(pipeline: string, releaseId: string, effectId: string): Promise<{ ts?: string; settled?: PauseEnd }> {
    const [ts, settled] = await this.redis.hmget(this.keys.slackReplyMessages(pipeline, releaseId), effectId, `settled:${effectId}`);
    return { ...(ts ? { ts } : {}), ...(settled ? { settled: JSON.parse(settled) as PauseEnd } : {}) };
  }

  async saveReplyTs(pipeline: string, releaseId: string, effectId: string, ts: string): Promise<void> {
    await this.writeReplyMessage(pipeline, releaseId, effectId, ts);
  }

  /** The reply's buttons are gone (or it is to be posted without them): how its pause ended. */
  async markSettled(pipeline: string, releaseId: string, effectId: string, ended: PauseEnd): Promise<void> {
    await this.writeReplyMessage(pipeline, releaseId, `settled:${effectId}`, JSON.stringify(ended));
  }

  private async writeReplyMessage(pipeline: string, releaseId: string, field: string, value: string): Promise<void> {
    const key = this.keys.slackReplyMessages(pipeline, releaseId);
    // Bounded from its first write, like the replies set; expireWhenFinished sets the release's own TTL.
    await this.redis.multi().hset(key, field, value).pexpire(key, this.unfinishedTtlMs, 'NX').exec();
  }
}
