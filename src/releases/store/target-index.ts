/**
 * Which release each target currently runs, and which targets a stage has (heard recently).
 * The reducer uses it to tell "a new release on this target" from "the same one again", and to
 * know a stage is not done while one of its targets has not reported the release yet.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import { ExpiryRefresh } from '../../store/expiry-refresh.js';
import type { Keys } from '../../store/keys.js';
import { sameKeys } from '../record/pending.js';

/** The newest observation of a Kargo Stage the pipeline heard, and whether it was its removal. */
export interface KargoSeen {
  uid?: string;
  generation?: number;
  resourceVersion: string;
  removed?: true;
}

export interface TargetEntry {
  stage: string;
  releaseId: string;
  heardAt: number;
  /** The target's app labels (mixed-stage.ts APP_LABELS): what would split a stage that mixes apps. */
  appLabels?: Record<string, string>;
  /** A Kargo Stage: its newest observation; `removed`: a tombstone (it left the stage, and counts for nothing: kargo-tombstones.ts). */
  kargo?: KargoSeen;
}
type Entry = TargetEntry;

const buried = (entry: Entry): boolean => entry.kargo?.removed === true;

export interface TargetIndexOptions {
  /** A target not heard from for this long no longer counts as part of its stage (it was deleted). */
  forgetAfterMs: number;
  /** How long a read of a pipeline's targets may be reused. */
  cacheMs?: number;
  /**
   * Entries not heard from for this long are dropped, and the hashes expire this long after
   * their last write: the longest a release record lives (default 30 days).
   */
  retainMs?: number;
}

const DEFAULT_RETAIN_MS = 30 * 86_400_000;
/** How stale an entry's `heardAt` may get before a fact that changes nothing else rewrites it (onlyHeardAgain). */
const HEARD_AGAIN_SLACK_MS = 60_000;

/* The index's version while the index exists, else '' (KEYS[1] the index, KEYS[2] its version). */
const VERSION_EXPR = `redis.call('EXISTS', KEYS[1]) == 1 and redis.call('GET', KEYS[2]) or ''`;

/*
 * KEYS[1] the pipeline's target index, KEYS[2] its version; ARGV the targets. Returns the version
 * ('' for none), then target/release pairs, one per distinct release the targets run
 * (ownedFromEntry's: none for a tombstone, an unreadable entry names none): an ApplicationSet's
 * thousands of children run a few releases, and this sends those back instead of every child's entry.
 */
const RELEASES_AMONG = `
local values = redis.call('HMGET', KEYS[1], unpack(ARGV))
local seen, out = {}, {${VERSION_EXPR}}
for i, json in ipairs(values) do
  if json then
    local ok, entry = pcall(cjson.decode, json)
    if ok and type(entry) == 'table' and type(entry.releaseId) == 'string' then
      local buried = type(entry.kargo) == 'table' and entry.kargo.removed == true
      if not buried and not seen[entry.releaseId] then
        seen[entry.releaseId] = true
        out[#out + 1] = ARGV[i]
        out[#out + 1] = entry.releaseId
      end
    end
  end
end
return out
`;

const VERSION = `return ${VERSION_EXPR}`;

type RedisWithTargets = Redis & {
  glidepathReleasesAmong(key: string, version: string, ...targets: string[]): Promise<string[]>;
  glidepathTargetsVersion(key: string, version: string): Promise<string>;
};

type MultiWithTargets = ChainableCommander & { glidepathTargetsVersion(key: string, version: string): MultiWithTargets };

/** The index's version after this process's write answered `incremented` (INCR): known only when it follows `kept`, no other writer between. */
function versionAfterOwnWrite(kept: string | undefined, incremented: unknown): string | undefined {
  return kept !== undefined && typeof incremented === 'number' && incremented === Number(kept || 0) + 1 ? String(incremented) : undefined;
}

/** The longest a pipeline's entries are kept on an unchanged version before they are read whole again (stale entries dropped). */
const FULL_READ_MS = 60_000;

/** Targets per HMGET inside the script: Lua's unpack is bounded by its stack. */
const AMONG_BATCH = 4_000;

/**
 * Targets per stage heard within the forget window (a tombstone counts for nothing), and the
 * time after which the first of them is forgotten.
 */
export function knownByStage(entries: Iterable<[string, Entry]>, now: number, forgetAfterMs: number): { byStage: Record<string, string[]>; validUntil: number } {
  const byStage: Record<string, string[]> = {};
  let validUntil = Infinity;
  for (const [target, entry] of entries) {
    if (now - entry.heardAt > forgetAfterMs || buried(entry)) continue;
    (byStage[entry.stage] ??= []).push(target);
    validUntil = Math.min(validUntil, entry.heardAt + forgetAfterMs);
  }
  return { byStage, validUntil };
}

/** Whether an entry tells a stage's split apart from `held` (mixed-stage.ts reads the release and the app labels). */
function splitsDiffer(held: Entry | undefined, next: Entry): boolean {
  return held === undefined || held.releaseId !== next.releaseId || JSON.stringify(held.appLabels) !== JSON.stringify(next.appLabels);
}

/** What an entry says its target owns: its release (none for a tombstone) and what was last seen of a Kargo Stage (tombstones included). */
export function ownedFromEntry(entry: Entry): { releaseId?: string; kargo?: KargoSeen } {
  return { ...(buried(entry) ? {} : { releaseId: entry.releaseId }), ...(entry.kargo ? { kargo: entry.kargo } : {}) };
}

/**
 * Known targets per stage, built from one read of the hash: the same lists (read-only) serve
 * every batch until a target joins, changes stage or is forgotten, so the reducer sorts a
 * stage's thousands of targets once instead of on every fact.
 */
interface KnownByStage {
  entries: Map<string, Entry>;
  byStage: Record<string, string[]>;
  /** Built for this time; an earlier time may count targets forgotten by then. */
  builtAt: number;
  /** After this time the first counted target is forgotten. */
  validUntil: number;
}

export class TargetIndex {
  private readonly cache = new Map<string, { at: number; readAt: number; entries: Map<string, Entry>; version?: string }>();
  private readonly known = new Map<string, KnownByStage>();
  /** The last releasesAmong answer per pipeline, at the index version it was read at. */
  private readonly among = new Map<string, { version: string; targets: readonly string[]; releases: ReadonlyMap<string, string> }>();
  /** The hashes' expiry, moved on at most hourly rather than on every fact (expiry-refresh.ts). */
  private readonly expiry: ExpiryRefresh;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly options: TargetIndexOptions,
  ) {
    this.expiry = new ExpiryRefresh(options.retainMs ?? DEFAULT_RETAIN_MS);
    if (!('glidepathReleasesAmong' in redis)) {
      redis.defineCommand('glidepathReleasesAmong', { numberOfKeys: 2, lua: RELEASES_AMONG });
      redis.defineCommand('glidepathTargetsVersion', { numberOfKeys: 2, lua: VERSION });
    }
  }

  /**
   * The pipeline's entries, read whole at most every cacheMs; past that, while the index's
   * version is the one they were read at (or moved on only by this process's own writes, which
   * the kept Map already holds), kept for up to FULL_READ_MS: a fleet's 4,000 entries are not
   * parsed again each second for one small GET, and the Maps and lists derived from them
   * (knownTargets, the reducer's stage splits) stay the same objects.
   */
  private async entries(pipeline: string, now: number): Promise<Map<string, Entry>> {
    const cached = this.cache.get(pipeline);
    if (cached && now - cached.at < (this.options.cacheMs ?? 1_000)) return cached.entries;
    const index = this.keys.targetReleases(pipeline);
    const versionKey = this.keys.targetReleasesVersion(pipeline);
    if (cached?.version !== undefined && now - cached.readAt < FULL_READ_MS && (await (this.redis as RedisWithTargets).glidepathTargetsVersion(index, versionKey)) === cached.version) {
      cached.at = now;
      return cached.entries;
    }
    const read = await (this.redis.multi() as MultiWithTargets).glidepathTargetsVersion(index, versionKey).hgetall(index).exec();
    const [version, hash] = (read ?? []).map(([err, value]) => (err ? undefined : value));
    const raw = (hash ?? {}) as Record<string, string>;
    const entries = new Map<string, Entry>();
    const stale: string[] = [];
    for (const [target, json] of Object.entries(raw)) {
      try {
        const entry = JSON.parse(json) as Entry;
        // Silent for longer than any release lives: a deleted target. Dropped here, on the
        // reducer's path, at most once per read of the hash.
        if (now - entry.heardAt > this.retainMs) stale.push(target);
        else entries.set(target, entry);
      } catch {
        // An unreadable entry is rewritten by the next fact of that target.
      }
    }
    let readVersion = typeof version === 'string' ? version : undefined;
    if (stale.length > 0) {
      const dropped = await this.redis.multi().hdel(index, ...stale).incr(versionKey).pexpire(versionKey, this.expiry.ttl(this.retainMs)).exec();
      readVersion = versionAfterOwnWrite(readVersion, dropped?.[1]?.[1]);
    }
    this.cache.set(pipeline, { at: now, readAt: now, entries, ...(readVersion !== undefined ? { version: readVersion } : {}) });
    return entries;
  }

  /** Targets per stage heard within the forget window. The lists are shared: never change them. */
  async knownTargets(pipeline: string, now: number): Promise<Readonly<Record<string, string[]>>> {
    const entries = await this.entries(pipeline, now);
    const cached = this.known.get(pipeline);
    if (cached && cached.entries === entries && now >= cached.builtAt && now <= cached.validUntil) return cached.byStage;
    const { byStage, validUntil } = knownByStage(entries, now, this.options.forgetAfterMs);
    this.known.set(pipeline, { entries, byStage, builtAt: now, validUntil });
    return byStage;
  }

  /**
   * What each target of the pipeline runs (release id, app labels), from the same read as
   * knownTargets: tells a target still to start from another app's (mixed-stage.ts). Shared: never change it.
   */
  async knownTargetReleases(pipeline: string, now: number): Promise<ReadonlyMap<string, TargetEntry>> {
    return this.entries(pipeline, now);
  }

  /** Whether recording `entry` for `target` changes what knownTargets would return from `known`. */
  private changesKnown(known: KnownByStage, target: string, entry: Entry): boolean {
    const before = known.entries.get(target);
    if (!before || before.stage !== entry.stage || entry.heardAt < before.heardAt || buried(before) !== buried(entry)) return true;
    // Heard again after it was forgotten at build time: it counts again.
    return known.builtAt - before.heardAt > this.options.forgetAfterMs;
  }

  /**
   * The releases several targets run, each named with one target that runs it: the set of the
   * releases ownedOf names, without sending each target's entry back (an ApplicationSet fact's
   * routing asks this of its thousands of children, on each of its facts). The same targets asked
   * again while the index's version has not moved (no replica wrote it since) get the answer kept
   * here, for one small read. Shared: never change it.
   */
  async releasesAmong(pipeline: string, targets: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const redis = this.redis as RedisWithTargets;
    const index = this.keys.targetReleases(pipeline);
    const versionKey = this.keys.targetReleasesVersion(pipeline);
    const kept = this.among.get(pipeline);
    if (kept && sameKeys(kept.targets, targets) && (await redis.glidepathTargetsVersion(index, versionKey)) === kept.version) return kept.releases;
    const out = new Map<string, string>();
    const seen = new Set<string>();
    const versions = new Set<string>();
    for (let i = 0; i < targets.length; i += AMONG_BATCH) {
      const [version, ...pairs] = await redis.glidepathReleasesAmong(index, versionKey, ...targets.slice(i, i + AMONG_BATCH));
      versions.add(version ?? '');
      for (let j = 0; j + 1 < pairs.length; j += 2) {
        const releaseId = pairs[j + 1] as string;
        if (seen.has(releaseId)) continue;
        seen.add(releaseId);
        out.set(pairs[j] as string, releaseId);
      }
    }
    // Kept only when every part was read at one version (and the index has one: it was written since this code).
    const [version] = versions;
    if (versions.size === 1 && version) this.among.set(pipeline, { version, targets: [...targets], releases: out });
    else this.among.delete(pipeline);
    return out;
  }

  /** Current releases of several targets, and what was last seen of those that are Kargo Stages (tombstones included), in one round trip. */
  async ownedOf(pipeline: string, targets: string[]): Promise<{ releases: Map<string, string>; kargo: Map<string, KargoSeen> }> {
    const releases = new Map<string, string>();
    const kargo = new Map<string, KargoSeen>();
    if (targets.length === 0) return { releases, kargo };
    const values = await this.redis.hmget(this.keys.targetReleases(pipeline), ...targets);
    values.forEach((json, i) => {
      if (!json) return;
      const owned = ownedFromEntry(JSON.parse(json) as Entry);
      if (owned.releaseId !== undefined) releases.set(targets[i] as string, owned.releaseId);
      if (owned.kargo) kargo.set(targets[i] as string, owned.kargo);
    });
    return { releases, kargo };
  }

  private get retainMs(): number {
    return this.options.retainMs ?? DEFAULT_RETAIN_MS;
  }

  /**
   * Records what the targets run now (a tombstone, for a Kargo Stage that left). Bounded: the hash expires `retainMs` (at most an hour more:
   * expiry-refresh.ts) after the pipeline's last fact, and targets silent for that long (deleted Rollouts) are dropped when it is read.
   */
  async recordMany(pipeline: string, all: [string, Entry][]): Promise<void> {
    const cached = this.cache.get(pipeline);
    const entries = cached ? all.filter(([t, e]) => !this.onlyHeardAgain(cached.entries.get(t), e)) : all;
    if (entries.length === 0) return;
    const key = this.keys.targetReleases(pipeline);
    const version = this.keys.targetReleasesVersion(pipeline);
    const write = this.redis.multi().hset(key, Object.fromEntries(entries.map(([t, e]) => [t, JSON.stringify(e)]))).incr(version);
    if (this.expiry.due(key)) write.pexpire(key, this.expiry.ttl(this.retainMs)).pexpire(version, this.expiry.ttl(this.retainMs));
    let written: [Error | null, unknown][] | null;
    try {
      written = await write.exec();
    } catch (err) {
      this.expiry.forget(key);
      throw err;
    }
    if (cached) {
      // The kept Map takes this write below: its version stays known while no other writer came between.
      const next = versionAfterOwnWrite(cached.version, written?.[1]?.[1]);
      if (next !== undefined) cached.version = next;
      else delete cached.version;
    }
    const known = this.known.get(pipeline);
    if (known && entries.some(([t, e]) => this.changesKnown(known, t, e))) this.known.delete(pipeline);
    if (!cached) return;
    // The Map handed out is never changed under what was derived from it: a target that runs another
    // release or app now makes a new one (the reducer keeps its stage splits per Map: mixed-stage.ts).
    if (entries.some(([t, e]) => splitsDiffer(cached.entries.get(t), e))) {
      const next = new Map(cached.entries);
      const still = this.known.get(pipeline);
      if (still?.entries === cached.entries) still.entries = next;
      cached.entries = next;
    }
    for (const [t, e] of entries) cached.entries.set(t, e);
  }

  /**
   * Whether `next` only says the target was heard again, a moment after what the index holds
   * (`held`, as last read or written): the same stage, release, labels and Kargo observation.
   * Rewriting it would cost the index's write on every fact of a Rollout moving through its
   * steps for nothing but `heardAt`, which only counts against forgetAfterMs: it is rewritten
   * once it is HEARD_AGAIN_SLACK old (a target silent since is forgotten that much earlier at most).
   */
  private onlyHeardAgain(held: Entry | undefined, next: Entry): boolean {
    if (!held || next.heardAt < held.heardAt || next.heardAt - held.heardAt >= Math.min(HEARD_AGAIN_SLACK_MS, this.options.forgetAfterMs / 100)) return false;
    return JSON.stringify({ ...held, heardAt: 0 }) === JSON.stringify({ ...next, heardAt: 0 });
  }

  /** Application (`cluster/namespace/name`) → the stages and releases whose Rollouts it manages. */
  async recordApplication(application: string, route: { pipeline: string; stage: string; releaseId: string }): Promise<void> {
    // One field per pipeline stage (bounded by the config); the hash expires with the releases it names.
    const key = this.keys.applicationTargets(application);
    if (!this.expiry.due(key)) await this.redis.hset(key, `${route.pipeline}/${route.stage}`, route.releaseId);
    else await this.redis.multi().hset(key, `${route.pipeline}/${route.stage}`, route.releaseId).pexpire(key, this.expiry.ttl(this.retainMs)).exec().catch((err: unknown) => {
      this.expiry.forget(key);
      throw err;
    });
  }


  async routesOfApplication(application: string): Promise<{ pipeline: string; stage: string; releaseId: string }[]> {
    const raw = await this.redis.hgetall(this.keys.applicationTargets(application));
    return Object.entries(raw).map(([where, releaseId]) => {
      const slash = where.lastIndexOf('/');
      return { pipeline: where.slice(0, slash), stage: where.slice(slash + 1), releaseId };
    });
  }
}
