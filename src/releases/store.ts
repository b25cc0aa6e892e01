/**
 * Release records in Redis. One hash per release holds a version, the record and its outbox.
 * Writes are compare-and-set on the version inside one Lua script, so two workers reducing
 * facts of the same release concurrently can never lose an update: the loser re-reads and
 * reduces again.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';
import type { ReleaseReader } from './ports.js';
import { FINISHED_RELEASE_STATUSES, type Effect, type ReleaseRecord } from './record.js';

/*
 * KEYS[1] release hash, KEYS[2] release index (zset)
 * ARGV[1] expected version ("0" when the record must not exist yet), ARGV[2] new version,
 * ARGV[3] record JSON, ARGV[4] outbox JSON ("" for none), ARGV[5] TTL ms ("0" keeps forever),
 * ARGV[6] index score, ARGV[7] index member
 * Returns 1 when saved, 0 when the version moved on.
 */
const SAVE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'v')
if (current or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
if ARGV[4] == '' then redis.call('HDEL', KEYS[1], 'outbox') else redis.call('HSET', KEYS[1], 'outbox', ARGV[4]) end
if ARGV[5] == '0' then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
return 1
`;

/* Clears the outbox only if it still holds exactly what was dispatched. */
const CLEAR_OUTBOX_SCRIPT = `
if redis.call('HGET', KEYS[1], 'outbox') == ARGV[1] then redis.call('HDEL', KEYS[1], 'outbox') return 1 end
return 0
`;

export class ConcurrentUpdateError extends Error {
  override readonly name = 'ConcurrentUpdateError';
  constructor(pipeline: string, releaseId: string, attempts: number) {
    super(`release ${pipeline}/${releaseId} changed under ${attempts} attempts in a row; the fact will be retried`);
  }
}

export interface StoredRelease {
  record: ReleaseRecord;
  outbox: Effect[];
}

export interface UpdateOutcome<T> {
  /** The record to save, or undefined to leave the store untouched. */
  next?: ReleaseRecord;
  /** Effects to save with the record, for dispatch after the save. */
  outbox?: Effect[];
  result: T;
}

export interface ReleaseStoreOptions {
  finishedTtlMs: number;
  maxAttempts?: number;
}

type RedisWithScripts = Redis & {
  glidepathSave(...args: string[]): Promise<number>;
  glidepathClearOutbox(...args: string[]): Promise<number>;
};

export class ReleaseStore implements ReleaseReader {
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly options: ReleaseStoreOptions,
  ) {
    if (!('glidepathSave' in redis)) {
      redis.defineCommand('glidepathSave', { numberOfKeys: 2, lua: SAVE_SCRIPT });
      redis.defineCommand('glidepathClearOutbox', { numberOfKeys: 1, lua: CLEAR_OUTBOX_SCRIPT });
    }
    this.redis = redis as RedisWithScripts;
  }

  async load(pipeline: string, releaseId: string): Promise<StoredRelease | undefined> {
    const [version, data, outbox] = await this.redis.hmget(this.keys.release(pipeline, releaseId), 'v', 'data', 'outbox');
    if (version == null || data == null) return undefined;
    const record = JSON.parse(data) as ReleaseRecord;
    record.version = Number(version);
    return { record, outbox: outbox ? (JSON.parse(outbox) as Effect[]) : [] };
  }

  async get(pipeline: string, releaseId: string): Promise<ReleaseRecord | undefined> {
    return (await this.load(pipeline, releaseId))?.record;
  }

  async list(pipeline: string, options: { includeFinished?: boolean; limit?: number } = {}): Promise<ReleaseRecord[]> {
    const limit = options.limit ?? 50;
    const indexKey = this.keys.releaseIndex(pipeline);
    const out: ReleaseRecord[] = [];
    let start = 0;
    const page = Math.max(limit, 50);
    while (out.length < limit) {
      const ids = await this.redis.zrevrange(indexKey, start, start + page - 1);
      if (ids.length === 0) break;
      start += ids.length;
      const pipe = this.redis.pipeline();
      for (const id of ids) pipe.hmget(this.keys.release(pipeline, id), 'v', 'data');
      const rows = (await pipe.exec()) ?? [];
      const expired: string[] = [];
      rows.forEach(([err, value], i) => {
        const [version, data] = (value ?? []) as [string | null, string | null];
        if (err || version === null || data === null) {
          expired.push(ids[i] as string);
          return;
        }
        const record = JSON.parse(data) as ReleaseRecord;
        record.version = Number(version);
        if (options.includeFinished || !FINISHED_RELEASE_STATUSES.includes(record.status)) out.push(record);
      });
      // Finished records expire on their own; their index entries are dropped when noticed.
      if (expired.length > 0) await this.redis.zrem(indexKey, ...expired);
    }
    return out.slice(0, limit);
  }

  /**
   * Reads the record, lets `decide` compute the next one, and saves it only if nobody saved in
   * between; otherwise reads again and decides again.
   */
  async update<T>(
    pipeline: string,
    releaseId: string,
    decide: (current: StoredRelease | undefined) => UpdateOutcome<T>,
  ): Promise<{ result: T; saved?: StoredRelease }> {
    const maxAttempts = this.options.maxAttempts ?? 20;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const current = await this.load(pipeline, releaseId);
      const outcome = decide(current);
      if (!outcome.next) return { result: outcome.result };
      const expected = current?.record.version ?? 0;
      const record: ReleaseRecord = { ...outcome.next, version: expected + 1 };
      const outbox = [...(current?.outbox ?? []), ...(outcome.outbox ?? [])];
      const finished = FINISHED_RELEASE_STATUSES.includes(record.status);
      const saved = await this.redis.glidepathSave(
        this.keys.release(pipeline, releaseId),
        this.keys.releaseIndex(pipeline),
        String(expected),
        String(record.version),
        JSON.stringify(record),
        outbox.length > 0 ? JSON.stringify(outbox) : '',
        finished ? String(Math.round(this.options.finishedTtlMs)) : '0',
        String(record.updatedAt),
        releaseId,
      );
      if (saved === 1) return { result: outcome.result, saved: { record, outbox } };
    }
    throw new ConcurrentUpdateError(pipeline, releaseId, maxAttempts);
  }

  /** Removes the outbox once its effects are in their queues (only if nothing was added since). */
  async clearOutbox(pipeline: string, releaseId: string, dispatched: Effect[]): Promise<boolean> {
    const cleared = await this.redis.glidepathClearOutbox(this.keys.release(pipeline, releaseId), JSON.stringify(dispatched));
    return cleared === 1;
  }

  async currentReleaseOfTarget(pipeline: string, target: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.targetReleases(pipeline), target)) ?? undefined;
  }

  async setCurrentReleaseOfTarget(pipeline: string, target: string, releaseId: string): Promise<void> {
    await this.redis.hset(this.keys.targetReleases(pipeline), target, releaseId);
  }
}
