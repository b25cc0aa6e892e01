/**
 * Where each release's Slack thread lives: channel and parent ts (so a restart continues the
 * same thread), a digest of the parent last sent (so an unchanged render sends nothing), the
 * replies already posted, and the lock that makes the parent exist exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DEFAULT_UNFINISHED_TTL_MS } from '../../releases/store/store.js';
import type { Keys } from '../../store/keys.js';
import type { PauseEnd, ReleaseStatus } from '../../releases/record/record.js';
import type { ReplyProduced } from './jobs.js';
import { endTold, type ThreadEnd } from './late-reply.js';
import { RENEW } from '../../store/lease.js';

export interface ThreadRef {
  channel: string;
  ts: string;
  /** Digest of the parent message last sent. */
  rendered?: string;
  /** Record version that digest was rendered from. */
  version?: number;
  /**
   * The latest end of the release the thread's replies told (a reply of a record that had ended):
   * later replies from older records are late. The parent's render is not one: it is above every
   * reply and always shows the latest state, so a reply under it reads in order until an end is said below.
   */
  ended?: ThreadEnd;
}



/* KEYS[1] lock; ARGV[1] token. Deletes the lock only if we still hold it. */
const UNLOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/*
 * KEYS[1] thread hash, KEYS[2] the thread lock (same slot: both tagged with the pipeline);
 * ARGV[1] digest, ARGV[2] version, ARGV[3] lock token.
 * Records what the parent shows now, unless a newer record's render was already recorded (0), or
 * this writer no longer holds the thread lock (-1: it was paused past the lock's TTL, and another
 * writer may have edited the parent since; its word on what Slack shows is no longer good).
 */
const MARK_RENDERED_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return -1 end
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '-1')
if tonumber(ARGV[2]) < current then return 0 end
redis.call('HSET', KEYS[1], 'rendered', ARGV[1], 'version', ARGV[2])
return 1
`;

/*
 * KEYS[1] thread hash, KEYS[2] thread lock; ARGV[1] token, ARGV[2] lock TTL ms, ARGV[3] the
 * record version about to be sent ("" for a first post), ARGV[4] thread TTL ms.
 * Just before a Slack call: 1 (and the lock extended) while this writer holds the lock and the
 * thread has not moved past that version; -1 when the lock is someone else's, 0 when moved past.
 * With ARGV[5..] (channel, ts, rendered, version) it saves the parent under the same check.
 */
const FENCED_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
if ARGV[3] ~= '' and tonumber(ARGV[3]) < tonumber(redis.call('HGET', KEYS[1], 'version') or '-1') then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if ARGV[5] then
  redis.call('HSET', KEYS[1], 'channel', ARGV[5], 'ts', ARGV[6], 'rendered', ARGV[7], 'version', ARGV[8])
  redis.call('PEXPIRE', KEYS[1], ARGV[4], 'NX')
end
return 1
`;

/*
 * KEYS[1] thread hash; ARGV[1] version, ARGV[2] status: a reply of an ended record was posted.
 * Keeps the latest such end (an older one never replaces it), only in a thread that exists.
 */
const MARK_ENDED_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(ARGV[1]) <= tonumber(redis.call('HGET', KEYS[1], 'endedVersion') or '-1') then return 0 end
redis.call('HSET', KEYS[1], 'endedVersion', ARGV[1], 'endedStatus', ARGV[2])
return 1
`;


/** What a fenced thread write found: done, the thread moved past it, or the lock is no longer ours. */
export type FencedResult = 'ok' | 'moved-past' | 'lock-lost';
const fencedResult = (n: number): FencedResult => (n === 1 ? 'ok' : n === 0 ? 'moved-past' : 'lock-lost');

type RedisWithScripts = Redis & {
  glidepathSlackUnlock(key: string, token: string): Promise<number>;
  glidepathSlackMarkRendered(key: string, lock: string, digest: string, version: string, token: string): Promise<number>;
  glidepathSlackFenced(key: string, lock: string, ...args: string[]): Promise<number>;
  glidepathSlackExtend(key: string, token: string, ttlMs: string): Promise<number>;
  glidepathSlackMarkEnded(key: string, version: string, status: string): Promise<number>;
};

export class ThreadStore {
  private readonly redis: RedisWithScripts;
  /** Renewal timers of the locks and claims this writer holds, by key and token. */
  private readonly alive = new Map<string, NodeJS.Timeout>();

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
      redis.defineCommand('glidepathSlackMarkRendered', { numberOfKeys: 2, lua: MARK_RENDERED_SCRIPT });
      redis.defineCommand('glidepathSlackFenced', { numberOfKeys: 2, lua: FENCED_SCRIPT });
      // A lock or claim is extended exactly as a lease is renewed: only while it is ours.
      redis.defineCommand('glidepathSlackExtend', { numberOfKeys: 1, lua: RENEW });
      redis.defineCommand('glidepathSlackMarkEnded', { numberOfKeys: 1, lua: MARK_ENDED_SCRIPT });
    }
    this.redis = redis as RedisWithScripts;
  }

  async get(pipeline: string, releaseId: string): Promise<ThreadRef | undefined> {
    const [channel, ts, rendered, version, endedVersion, endedStatus] = await this.redis.hmget(this.keys.slackThread(pipeline, releaseId), 'channel', 'ts', 'rendered', 'version', 'endedVersion', 'endedStatus');
    if (!channel || !ts) return undefined;
    const ended = endedVersion && endedStatus ? { ended: { version: Number(endedVersion), status: endedStatus as ReleaseStatus } } : {};
    return { channel, ts, ...(rendered ? { rendered } : {}), ...(version ? { version: Number(version) } : {}), ...ended };
  }

  /**
   * Saves the parent just posted, only while this writer holds the thread lock (`token`): a writer
   * that lost it while posting must not replace the thread another writer saved (or adopted) since.
   * Bounded from its first write; expireWhenFinished then sets the release's own TTL.
   */
  async saveParentUnderLock(pipeline: string, releaseId: string, thread: Required<Omit<ThreadRef, 'ended'>>, token: string, lockTtlMs: number): Promise<FencedResult> {
    const key = this.keys.slackThread(pipeline, releaseId);
    const lock = this.keys.slackThreadLock(pipeline, releaseId);
    return fencedResult(await this.redis.glidepathSlackFenced(key, lock, token, String(lockTtlMs), '', String(this.unfinishedTtlMs), thread.channel, thread.ts, thread.rendered, String(thread.version)));
  }

  /** A thread that exists already (commands' tests, a migration): saved without the lock. */
  async saveParent(pipeline: string, releaseId: string, thread: Required<Omit<ThreadRef, 'ended'>>): Promise<void> {
    const key = this.keys.slackThread(pipeline, releaseId);
    await this.redis
      .multi()
      .hset(key, { channel: thread.channel, ts: thread.ts, rendered: thread.rendered, version: String(thread.version) })
      .pexpire(key, this.unfinishedTtlMs, 'NX')
      .exec();
  }

  /** Just before a Slack call under the thread lock: still ours (extended), and the thread not past `version`. */
  async checkLock(pipeline: string, releaseId: string, token: string, lockTtlMs: number, version?: number): Promise<FencedResult> {
    const key = this.keys.slackThread(pipeline, releaseId);
    const lock = this.keys.slackThreadLock(pipeline, releaseId);
    return fencedResult(await this.redis.glidepathSlackFenced(key, lock, token, String(lockTtlMs), version === undefined ? '' : String(version), String(this.unfinishedTtlMs)));
  }

  /** The parent was deleted in Slack: the next render starts a new thread. */
  async forget(pipeline: string, releaseId: string): Promise<void> {
    await this.redis.del(this.keys.slackThread(pipeline, releaseId));
  }

  async markRendered(pipeline: string, releaseId: string, digest: string, version: number, token: string): Promise<FencedResult> {
    return fencedResult(await this.redis.glidepathSlackMarkRendered(this.keys.slackThread(pipeline, releaseId), this.keys.slackThreadLock(pipeline, releaseId), digest, String(version), token));
  }

  /** A reply was posted: when its record had ended the release, the thread has told that end. */
  async markEnded(pipeline: string, releaseId: string, produced: ReplyProduced | undefined): Promise<void> {
    const end = endTold(produced);
    if (end) await this.redis.glidepathSlackMarkEnded(this.keys.slackThread(pipeline, releaseId), String(end.version), end.status);
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
    const key = this.keys.slackThreadLock(pipeline, releaseId);
    const ok = await this.redis.set(key, token, 'PX', ttlMs, 'NX');
    if (ok !== 'OK') return undefined;
    this.keepAlive(key, token, ttlMs);
    return token;
  }

  async unlock(pipeline: string, releaseId: string, token: string): Promise<void> {
    const key = this.keys.slackThreadLock(pipeline, releaseId);
    this.letGo(key, token);
    await this.redis.glidepathSlackUnlock(key, token);
  }

  /**
   * A held lock or claim is renewed every half TTL, as BullMQ renews a job's lock: the TTL can be
   * short (a stopped writer frees the thread within it) while a live writer keeps it through a
   * Slack call slower than the TTL. A renewal that finds it gone stops; the fenced checks before
   * each call and save then refuse the write.
   */
  private keepAlive(key: string, token: string, ttlMs: number): void {
    const id = `${key}\u0000${token}`;
    const timer = setInterval(() => {
      this.redis.glidepathSlackExtend(key, token, String(ttlMs)).then(
        (held) => (held === 1 ? undefined : this.letGo(key, token)),
        () => undefined, // Redis unreachable: the next renewal tries again, the fenced checks decide.
      );
    }, Math.max(50, Math.floor(ttlMs / 2)));
    timer.unref();
    this.alive.set(id, timer);
  }

  private letGo(key: string, token: string): void {
    const id = `${key}\u0000${token}`;
    clearInterval(this.alive.get(id));
    this.alive.delete(id);
  }

  async replied(pipeline: string, releaseId: string, effectId: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.slackReplies(pipeline, releaseId), effectId)) === 1;
  }

  /**
   * Marks the reply posted (whoever posted it: it is true either way); the claim is dropped by
   * releaseReply. A worker that dies between posting and this leaves the claim to expire, and
   * the retry settles the post by metadata (post-ledger.ts).
   */
  async markReplied(pipeline: string, releaseId: string, effectId: string): Promise<void> {
    await this.redis
      .multi()
      .sadd(this.keys.slackReplies(pipeline, releaseId), effectId)
      // A set made by its first reply gets a TTL at once (NX keeps one set for a finished release).
      .pexpire(this.keys.slackReplies(pipeline, releaseId), this.unfinishedTtlMs, 'NX')
      .exec();
  }

  /** A claim token when this worker may post the reply now; undefined while another one is posting it. */
  async claimReply(pipeline: string, releaseId: string, effectId: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const key = this.keys.slackReplyClaim(pipeline, releaseId, effectId);
    if ((await this.redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined;
    this.keepAlive(key, token, ttlMs);
    return token;
  }

  /** Just before posting: the claim is still ours (and extended); false once it expired and another writer may have it. */
  async holdsReply(pipeline: string, releaseId: string, effectId: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.glidepathSlackExtend(this.keys.slackReplyClaim(pipeline, releaseId, effectId), token, String(ttlMs))) === 1;
  }

  /** Drops the claim only if it is still ours: a writer that woke late never frees another's claim. */
  async releaseReply(pipeline: string, releaseId: string, effectId: string, token: string): Promise<void> {
    const key = this.keys.slackReplyClaim(pipeline, releaseId, effectId);
    this.letGo(key, token);
    await this.redis.glidepathSlackUnlock(key, token);
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

  /** The files of a chart upload whose completion may have reached Slack: a retry completes these, not new ones. */
  async chartFiles(pipeline: string, releaseId: string, chartId: string): Promise<{ id: string; title: string }[] | undefined> {
    const saved = await this.redis.hget(this.keys.slackReplyMessages(pipeline, releaseId), `files:${chartId}`);
    return saved ? (JSON.parse(saved) as { id: string; title: string }[]) : undefined;
  }

  async saveChartFiles(pipeline: string, releaseId: string, chartId: string, files: { id: string; title: string }[]): Promise<void> {
    await this.writeReplyMessage(pipeline, releaseId, `files:${chartId}`, JSON.stringify(files));
  }

  private async writeReplyMessage(pipeline: string, releaseId: string, field: string, value: string): Promise<void> {
    const key = this.keys.slackReplyMessages(pipeline, releaseId);
    // Bounded from its first write, like the replies set; expireWhenFinished sets the release's own TTL.
    await this.redis.multi().hset(key, field, value).pexpire(key, this.unfinishedTtlMs, 'NX').exec();
  }
}
