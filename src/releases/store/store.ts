/**
 * Release records in Redis. One hash per release holds a version, the record and its outbox.
 * Writes are compare-and-set on the version inside one Lua script, so two workers reducing
 * facts of the same release concurrently can never lose an update: the loser re-reads and
 * reduces again.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';
import type { ReleaseReader } from './ports.js';
import { FINISHED_RELEASE_STATUSES, type Effect, type ReleaseRecord } from '../record/record.js';
import { decodeRecord } from './record-codec.js';
import { encodeChanges, type Encoded } from './record-save.js';
import { FencedWriteError } from './fence.js';
import { VERIFY_KEPT_TARGETS } from '../record/target-writes.js';
import { ExpiryRefresh } from '../../store/expiry-refresh.js';

/** Values per HSET/HDEL inside SAVE_SCRIPT (even: field/value pairs stay together). */
const UNPACK_BATCH = 2_000;

/*
 * KEYS[1] release hash, KEYS[2] release index (zset), KEYS[3] open-release index (zset: the
 * unfinished ones, so listing them never reads finished records)
 * ARGV[1] expected version ("0" when the record must not exist yet), ARGV[2] new version,
 * ARGV[3] outbox JSON ("" for none), ARGV[4] TTL ms of the record, ARGV[5] index score,
 * ARGV[6] index member, ARGV[7] index entries scored below this are dropped (their records have
 * expired), ARGV[8] TTL ms of the index, ARGV[9] "1" when the record is finished,
 * ARGV[10] the writer's fencing epoch ("" when it works under no lease), ARGV[11] "1" to move the
 * expiries on (expiry-refresh.ts: at most hourly; a new record and an index that gains a member
 * get theirs anyway), ARGV[12] n = number of fields to set, then n field/value pairs, then the
 * fields to delete.
 * Returns 1 when saved, 0 when the version moved on, -1 when a newer lease holder has written the
 * record (nothing is written then).
 *
 * The fence lives in the record (its `fence` field: the highest partition-lease epoch that wrote
 * it), not in a check of the lease key: the lease is one key per partition and the record is
 * tagged with its pipeline, so on Redis Cluster they are in different slots and no script may
 * read both. A pipeline's records are only ever written by the holder of its partition (the
 * partition count is fixed by the key layout, layout.ts), so one epoch sequence per record is
 * enough: a holder that woke after a takeover carries a lower epoch than the new holder, and
 * once the new holder saved the record every write of the old one is refused. A write of the
 * old holder that lands before the new holder's first save is harmless: the new holder reads the
 * version it moved and reduces on top of it (the compare-and-set), and the old holder
 * dispatches nothing without its lease (reducer-worker.ts). The check costs one HGET inside the
 * script the save runs anyway: no round trip.
 *
 * Each command inside the script is a command Redis runs (INFO commandstats counts them), on
 * every save of every fact: the fields go in one HSET and one HDEL (in slices: Lua's unpack is
 * bounded by its stack), the version and fence in one HMGET, an index is trimmed of expired
 * entries only when it gains a member (the only time it grows), and expiries are moved on at
 * most hourly (ARGV[11]), not on every save.
 */
const SAVE_SCRIPT = `
local state = redis.call('HMGET', KEYS[1], 'fence', 'v')
local fence = ARGV[10] ~= '' and state[1]
if fence and tonumber(ARGV[10]) < tonumber(fence) then return -1 end
if (state[2] or '0') ~= ARGV[1] then return 0 end
local set = {'v', ARGV[2]}
if ARGV[10] ~= '' and fence ~= ARGV[10] then set[#set + 1] = 'fence' set[#set + 1] = ARGV[10] end
local n = tonumber(ARGV[12])
local i = 13
for _ = 1, n do
  set[#set + 1] = ARGV[i]
  set[#set + 1] = ARGV[i + 1]
  i = i + 2
end
local del = {}
while i <= #ARGV do
  del[#del + 1] = ARGV[i]
  i = i + 1
end
if ARGV[3] == '' then del[#del + 1] = 'outbox' else set[#set + 1] = 'outbox' set[#set + 1] = ARGV[3] end
for from = 1, #set, ${UNPACK_BATCH} do redis.call('HSET', KEYS[1], unpack(set, from, math.min(from + ${UNPACK_BATCH} - 1, #set))) end
for from = 1, #del, ${UNPACK_BATCH} do redis.call('HDEL', KEYS[1], unpack(del, from, math.min(from + ${UNPACK_BATCH} - 1, #del))) end
local refresh = ARGV[11] == '1' or ARGV[1] == '0'
if refresh then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
local function index(key)
  local added = redis.call('ZADD', key, ARGV[5], ARGV[6]) == 1
  if added then redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. ARGV[7]) end
  if refresh or added then redis.call('PEXPIRE', key, ARGV[8]) end
end
index(KEYS[2])
if ARGV[9] == '1' then redis.call('ZREM', KEYS[3], ARGV[6]) else index(KEYS[3]) end
return 1
`;

/* Clears the outbox only if it still holds exactly what was dispatched. */
const CLEAR_OUTBOX_SCRIPT = `
if redis.call('HGET', KEYS[1], 'outbox') == ARGV[1] then redis.call('HDEL', KEYS[1], 'outbox') return 1 end
return 0
`;

export const DEFAULT_UNFINISHED_TTL_MS = 30 * 86_400_000;

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

/** What was read or written, with the hash fields it came from (to send only what changes). */
interface Snapshot extends StoredRelease {
  encoded: Encoded;
}

export interface UpdateOutcome<T> {
  /** The record to save, or undefined to leave the store untouched. */
  next?: ReleaseRecord;
  /** Effects to save with the record, for dispatch after the save. */
  outbox?: Effect[];
  /**
   * With no `next`: `decide` left the record it was given as it was (the reducer's batch step
   * when no fact changed anything), so the parsed record stays cached. Without it a fact that
   * changes nothing (a repeated watch event) would cost the next fact a read of the whole record.
   */
  untouched?: boolean;
  result: T;
}

export interface ReleaseStoreOptions {
  finishedTtlMs: number;
  /**
   * A release that never finishes (announced only, Failed, stuck) expires this long after its
   * last write; every write refreshes it. Default 30 days (settings.unfinishedReleaseTtlDays).
   */
  unfinishedTtlMs?: number;
  maxAttempts?: number;
  /**
   * Records this process saved last, kept parsed (at most this many). A fact then costs reading
   * the version instead of the whole record; any other writer moves the version on and the
   * record is read again. 0 turns it off.
   */
  cacheSize?: number;
  /** Called on each compare-and-set that lost (another writer saved the release in between). */
  onConflict?: (pipeline: string) => void;
}

type RedisWithScripts = Redis & {
  glidepathSave(...args: string[]): Promise<number>;
  glidepathClearOutbox(...args: string[]): Promise<number>;
};

export class ReleaseStore implements ReleaseReader {
  private readonly redis: RedisWithScripts;
  private readonly cache = new Map<string, Snapshot>();
  private readonly unfinishedTtlMs: number;
  private readonly longestTtlMs: number;
  /** The records' and indexes' expiries, moved on at most hourly per release (expiry-refresh.ts). */
  private readonly expiry: ExpiryRefresh;
  /** Compare-and-set attempts that lost to another writer, since start. */
  conflicts = 0;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly options: ReleaseStoreOptions,
  ) {
    if (!('glidepathSave' in redis)) {
      redis.defineCommand('glidepathSave', { numberOfKeys: 3, lua: SAVE_SCRIPT });
      redis.defineCommand('glidepathClearOutbox', { numberOfKeys: 1, lua: CLEAR_OUTBOX_SCRIPT });
    }
    this.redis = redis as RedisWithScripts;
    this.unfinishedTtlMs = options.unfinishedTtlMs ?? DEFAULT_UNFINISHED_TTL_MS;
    this.longestTtlMs = Math.max(options.finishedTtlMs, this.unfinishedTtlMs);
    this.expiry = new ExpiryRefresh(Math.min(options.finishedTtlMs, this.unfinishedTtlMs));
  }

  private static fromHash(hash: Record<string, string>): Snapshot | undefined {
    // `fence` is the store's, not the record's (SAVE_SCRIPT).
    const { v, outbox, fence: _fence, ...rest } = hash;
    if (v === undefined) return undefined;
    const fields = new Map(Object.entries(rest));
    const record = decodeRecord(fields, Number(v));
    if (!record) return undefined;
    return { record, outbox: outbox ? (JSON.parse(outbox) as Effect[]) : [], encoded: { fields } };
  }

  async load(pipeline: string, releaseId: string): Promise<Snapshot | undefined> {
    return ReleaseStore.fromHash(await this.redis.hgetall(this.keys.release(pipeline, releaseId)));
  }

  /** The release, or the release a CI release id was announced into (a Freight's release that adopted it). */
  async get(pipeline: string, releaseId: string): Promise<ReleaseRecord | undefined> {
    const record = (await this.load(pipeline, releaseId))?.record;
    if (record) return record;
    const into = await this.redis.get(this.keys.releaseAlias(pipeline, releaseId));
    return into ? (await this.load(pipeline, into))?.record : undefined;
  }

  /** CI's release id `releaseId` was announced into release `into`: `get` finds it by either id. */
  async alias(pipeline: string, releaseId: string, into: string): Promise<void> {
    await this.redis.set(this.keys.releaseAlias(pipeline, releaseId), into, 'PX', Math.round(this.longestTtlMs));
  }

  /**
   * The newest releases of a pipeline, paged from its index. Without `includeFinished` it pages
   * the index of open releases only, so the cost does not grow with the finished history.
   */
  async list(pipeline: string, options: { includeFinished?: boolean; limit?: number } = {}): Promise<ReleaseRecord[]> {
    const limit = options.limit ?? 50;
    const indexKey = options.includeFinished ? this.keys.releaseIndex(pipeline) : this.keys.openReleaseIndex(pipeline);
    const out: ReleaseRecord[] = [];
    let start = 0;
    while (out.length < limit) {
      const page = limit - out.length;
      const ids = await this.redis.zrevrange(indexKey, start, start + page - 1);
      if (ids.length === 0) break;
      start += ids.length;
      const pipe = this.redis.pipeline();
      for (const id of ids) pipe.hgetall(this.keys.release(pipeline, id));
      const rows = (await pipe.exec()) ?? [];
      const gone: string[] = [];
      rows.forEach(([err, value], i) => {
        const snapshot = err ? undefined : ReleaseStore.fromHash((value ?? {}) as Record<string, string>);
        const finished = snapshot !== undefined && FINISHED_RELEASE_STATUSES.includes(snapshot.record.status);
        if (!snapshot || (finished && !options.includeFinished)) {
          gone.push(ids[i] as string);
          return;
        }
        out.push(snapshot.record);
      });
      // Expired records (and, in the open index, finished ones) are dropped from the index when noticed.
      if (gone.length > 0) {
        await this.redis.zrem(indexKey, ...gone);
        start -= gone.length;
      }
    }
    return out.slice(0, limit);
  }

  /**
   * The id of the pipeline's newest release, finished or not, without reading its record: ids
   * whose record is gone are dropped from the index, as `list` does.
   */
  async newestId(pipeline: string): Promise<string | undefined> {
    const indexKey = this.keys.releaseIndex(pipeline);
    for (;;) {
      const [id] = await this.redis.zrevrange(indexKey, 0, 0);
      if (id === undefined) return undefined;
      if ((await this.redis.exists(this.keys.release(pipeline, id))) === 1) return id;
      await this.redis.zrem(indexKey, id);
    }
  }

  /** The record as this process last saved it, if Redis still holds that version and outbox. */
  private async cached(pipeline: string, releaseId: string): Promise<Snapshot | undefined> {
    const key = this.keys.release(pipeline, releaseId);
    const entry = this.cache.get(key);
    if (!entry) return this.load(pipeline, releaseId);
    this.cache.delete(key);
    const [version, outbox] = await this.redis.hmget(key, 'v', 'outbox');
    const sameOutbox = (outbox ?? '') === (entry.outbox.length > 0 ? JSON.stringify(entry.outbox) : '');
    return version !== null && Number(version) === entry.record.version && sameOutbox ? entry : this.load(pipeline, releaseId);
  }

  /** A cached record `decide` did not change, cached again (under test, checked against what was saved). */
  private keepUntouched(pipeline: string, releaseId: string, current: Snapshot): void {
    if (VERIFY_KEPT_TARGETS) {
      const { set, del } = encodeChanges(current.record, current.encoded);
      if (set.length > 0 || del.length > 0) throw new Error(`a record said untouched was changed: ${[...set.map(([f]) => f), ...del].join(', ')} (src/releases/store/store.ts)`);
    }
    this.remember(pipeline, releaseId, current);
  }

  private remember(pipeline: string, releaseId: string, stored: Snapshot): void {
    const size = this.options.cacheSize ?? 0;
    if (size <= 0) return;
    const key = this.keys.release(pipeline, releaseId);
    this.cache.delete(key);
    this.cache.set(key, stored);
    if (this.cache.size > size) this.cache.delete(this.cache.keys().next().value as string);
  }

  /**
   * Reads the record, lets `decide` compute the next one, and saves it only if nobody saved in
   * between; otherwise reads again and decides again. `decide` owns the record it is given and
   * may update it in place.
   */
  async update<T>(
    pipeline: string,
    releaseId: string,
    decide: (current: StoredRelease | undefined) => UpdateOutcome<T>,
    options: { fence?: number } = {},
  ): Promise<{ result: T; saved?: StoredRelease }> {
    const maxAttempts = this.options.maxAttempts ?? 20;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // A cached record is handed out only once: `decide` may change it.
      const current = attempt === 1 ? await this.cached(pipeline, releaseId) : await this.load(pipeline, releaseId);
      // Read before `decide`, which may change the record in place.
      const wasFinished = current !== undefined && FINISHED_RELEASE_STATUSES.includes(current.record.status);
      const outcome = decide(current);
      if (!outcome.next) {
        if (current && outcome.untouched) this.keepUntouched(pipeline, releaseId, current);
        return { result: outcome.result };
      }
      const expected = current?.record.version ?? 0;
      const record: ReleaseRecord = { ...outcome.next, version: expected + 1 };
      const outbox = [...(current?.outbox ?? []), ...(outcome.outbox ?? [])];
      const finished = FINISHED_RELEASE_STATUSES.includes(record.status);
      const { set, del, after } = encodeChanges(record, current?.encoded);
      const key = this.keys.release(pipeline, releaseId);
      // Finishing (or reopening) changes the record's TTL: moved on at once.
      const refresh = this.expiry.due(key) || (current !== undefined && wasFinished !== finished);
      const saved = await this.save(
        key,
        this.keys.releaseIndex(pipeline),
        this.keys.openReleaseIndex(pipeline),
        String(expected),
        String(record.version),
        outbox.length > 0 ? JSON.stringify(outbox) : '',
        String(this.expiry.ttl(finished ? this.options.finishedTtlMs : this.unfinishedTtlMs)),
        String(record.updatedAt),
        releaseId,
        // No record outlives the longest TTL (and the refresh interval) after its last write, so older index entries name expired records.
        String(record.updatedAt - this.expiry.ttl(this.longestTtlMs)),
        String(this.expiry.ttl(this.longestTtlMs)),
        finished ? '1' : '0',
        options.fence !== undefined ? String(options.fence) : '',
        refresh ? '1' : '0',
        String(set.length),
        ...set.flat(),
        ...del,
      );
      if (saved === 1) {
        this.remember(pipeline, releaseId, { record, outbox, encoded: after });
        return { result: outcome.result, saved: { record, outbox } };
      }
      this.expiry.forget(key);
      if (saved === -1) {
        this.cache.delete(this.keys.release(pipeline, releaseId));
        throw new FencedWriteError('record', `${pipeline}/${releaseId}`, options.fence ?? 0);
      }
      this.conflicts++;
      this.options.onConflict?.(pipeline);
    }
    throw new ConcurrentUpdateError(pipeline, releaseId, maxAttempts);
  }

  /** One run of SAVE_SCRIPT; a failed one leaves the expiry to move on at the next save. */
  private async save(key: string, ...args: string[]): Promise<number> {
    try {
      return await this.redis.glidepathSave(key, ...args);
    } catch (err) {
      this.expiry.forget(key);
      throw err;
    }
  }

  /** Removes the outbox once its effects are in their queues (only if nothing was added since). */
  async clearOutbox(pipeline: string, releaseId: string, dispatched: Effect[]): Promise<boolean> {
    const key = this.keys.release(pipeline, releaseId);
    const cleared = await this.redis.glidepathClearOutbox(key, JSON.stringify(dispatched));
    const entry = this.cache.get(key);
    if (entry) {
      if (cleared === 1) entry.outbox = [];
      else this.cache.delete(key);
    }
    return cleared === 1;
  }
}
