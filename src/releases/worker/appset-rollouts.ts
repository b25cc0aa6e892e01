/**
 * One thread per rollout of an ApplicationSet, when its children carry no release id (issue #21).
 * Without one, a child's release used to be the revision it was compared against
 * (`revision-<12>`): children with a source each (a repo or a branch per environment, a
 * multi-source prod) opened a thread per revision for one change. Argo CD writes no rollout marker
 * we can rely on (docs/reducer.md), so the rule is ours:
 *
 * - A rollout of an ApplicationSet opens when a child's desired revisions change while no rollout
 *   of it is open. Its release id is the opener's first revision (`revision-<12>`, so a rollout of
 *   one revision for all keeps the id it always had), or CI's release id when CI announced that
 *   commit first (`announcedCommit`), or, when that id was used before, `revision-<12>.<ms opened>`.
 * - A child whose desired revisions change while a rollout is open, and that is not in it yet,
 *   joins it. A child already in it at other revisions is a new change: it opens the next rollout.
 * - Open means: its release is not finished (in the pipeline's release index and out of its open
 *   index) and it opened less than a window ago (the sum of the stall windows of the
 *   ApplicationSet's step stages: a rollout unfinished by then is stuck, and a later change is
 *   another one).
 * - Deterministic for repeated and out-of-order facts: a child's (revisions → rollout) is kept,
 *   and a fact of a child at revisions it joined one of the last rollouts with routes there again,
 *   whichever replica reduces it. The decision is one Lua script (atomic), over keys of the
 *   pipeline's slot.
 *
 * Bounded: one hash per pipeline and ApplicationSet holding the last {@link KEPT_ROLLOUTS}
 * rollouts (one field per child each), and one string per commit; all expire the longest a
 * release lives after their last write. A release id annotation on the children wins over all of
 * this (route.ts): CI's id in the template is one thread, as before.
 */
import type { Redis } from 'ioredis';
import { type ConfigFile, type PipelineConfig } from '../../config/file.js';
import { stallAfterMs } from '../../config/durations.js';
import type { ApplicationFact, Fact } from '../../facts/fact.js';
import type { Keys } from '../../store/keys.js';
import { appSetOwnerKey } from '../reduce/appset-known.js';
import { appSetKeyOfStage } from '../record/appset-record.js';
import type { ResolvedRoute } from '../../routing/route-types.js';
import { revisionReleaseId } from '../../routing/route.js';
import { TurnsInOrder, type Turn } from './turns-in-order.js';

/** Rollouts kept per ApplicationSet for replays: a fact older than the last few rollouts opens none. */
export const KEPT_ROLLOUTS = 4;

/** A revision that is a git commit: indexed by its first 12 characters, as a `revision-` release is keyed. */
export function commitKeyOf(revision: string): string | undefined {
  return /^[0-9a-f]{12,64}$/i.test(revision) ? revision.slice(0, 12).toLowerCase() : undefined;
}

/*
 * KEYS[1] the rollouts hash, KEYS[2] the pipeline's release index, KEYS[3] its open-release index,
 * then n rollout-of-commit keys and n announced-commit keys (one per commit of the child).
 * ARGV: child, its revisions (newline-joined), the id a rollout it opens takes, the fact's time ms, window ms,
 * TTL ms, rollouts kept, n. Returns {release id, 'again' | 'stale' | 'joined' | 'opened'}.
 */
const ROUTE_CHILD = `
local h = KEYS[1]
local child, sig, candidate = ARGV[1], ARGV[2], ARGV[3]
local now, window, ttl, keep, n = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local ids = {}
local raw = redis.call('HGET', h, 'ids')
if raw then for id in string.gmatch(raw, '[^\\n]+') do ids[#ids + 1] = id end end
-- A child's entry in a rollout: its revisions, then when the fact that joined it was heard.
local function entry(id)
  local v = redis.call('HGET', h, 'm:' .. id .. '\\n' .. child)
  if not v then return nil, nil end
  local s, at = string.match(v, '^(.*)\\n(%d+)$')
  return s, tonumber(at)
end
-- At these revisions in a rollout already: a repeated fact routes there again. In an older one, only
-- a fact heard before the child joined a newer rollout is a replay; a later one is a change back.
local movedAt, latest, latestAt
for i = #ids, 1, -1 do
  local s, at = entry(ids[i])
  if s == sig and (movedAt == nil or now < movedAt) then
    redis.call('PEXPIRE', h, ttl)
    return {ids[i], 'again'}
  end
  if s and (movedAt == nil or at < movedAt) then movedAt = at end
  if s and latest == nil then latest, latestAt = ids[i], at end
end
-- Heard before the child joined its latest rollout, at revisions no kept rollout holds: an old
-- fact, which opens nothing (the reducer orders it against what that release heard).
if latest and now < latestAt then return {latest, 'stale'} end
local function note(id)
  redis.call('HSET', h, 'm:' .. id .. '\\n' .. child, sig .. '\\n' .. ARGV[4])
  for i = 1, n do redis.call('SET', KEYS[3 + i], id, 'PX', ttl) end
  redis.call('PEXPIRE', h, ttl)
end
local cur = ids[#ids]
if cur then
  local member = redis.call('HEXISTS', h, 'm:' .. cur .. '\\n' .. child) == 1
  local opened = tonumber(redis.call('HGET', h, 'at:' .. cur) or '0')
  local finished = redis.call('ZSCORE', KEYS[2], cur) and not redis.call('ZSCORE', KEYS[3], cur)
  if not member and not finished and now - opened <= window then
    note(cur)
    return {cur, 'joined'}
  end
end
local function used(id)
  for _, v in ipairs(ids) do if v == id then return true end end
  return false
end
local id
for i = 1, n do
  local announced = redis.call('GET', KEYS[3 + n + i])
  if announced and not used(announced) then id = announced break end
end
if not id then
  id = candidate
  if used(id) or redis.call('ZSCORE', KEYS[2], id) then id = candidate .. '.' .. ARGV[4] end
end
ids[#ids + 1] = id
redis.call('HSET', h, 'at:' .. id, ARGV[4])
while #ids > keep do
  local gone = table.remove(ids, 1)
  local prefix = 'm:' .. gone .. '\\n'
  redis.call('HDEL', h, 'at:' .. gone)
  for _, f in ipairs(redis.call('HKEYS', h)) do
    if string.sub(f, 1, #prefix) == prefix then redis.call('HDEL', h, f) end
  end
end
redis.call('HSET', h, 'ids', table.concat(ids, '\\n'))
note(id)
return {id, 'opened'}
`;

type RedisWithRollouts = Redis & {
  glidepathRouteChild(...args: string[]): Promise<[string, 'again' | 'stale' | 'joined' | 'opened']>;
};

/** How long a rollout takes children in: every step stage of the ApplicationSet could have stalled by then. */
export function joinWindowMs(config: ConfigFile, pipeline: PipelineConfig, appSetKey: string): number {
  return pipeline.stages.filter((s) => appSetKeyOfStage(s) === appSetKey).reduce((sum, s) => sum + stallAfterMs(config, pipeline, s), 0);
}

export class AppSetRollouts {
  private readonly redis: RedisWithRollouts;
  /**
   * A child's rollout depends on the children placed before it, and the worker reduces many facts
   * at once, each reaching place() after reads of its own length: children of one ApplicationSet
   * are placed in the order the worker was handed their facts (turns-in-order.ts).
   */
  private readonly order = new TurnsInOrder();

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly config: ConfigFile,
    private readonly ttlMs: number,
  ) {
    if (!('glidepathRouteChild' in redis)) redis.defineCommand('glidepathRouteChild', { lua: ROUTE_CHILD });
    this.redis = redis as RedisWithRollouts;
  }

  /**
   * The fact's place in line, taken when the worker is handed it (before it awaits anything):
   * place() waits for it and gives it up. Only a child of an ApplicationSet waits; done() is safe
   * to call again (the worker calls it whatever became of the fact).
   */
  turnOf(fact: Fact): Turn {
    return this.order.take(fact.kind === 'application' ? appSetOwnerKey(fact) : undefined);
  }

  /**
   * The child's routes with a revision for a release id (no release id annotation) on stages of
   * its ApplicationSet go to the rollout it belongs to, once every child of the ApplicationSet
   * handed in before it has been placed (`turn`). They keep their id source (`images`): the
   * reducer judges each child at its own revisions whatever the release is keyed by, and the
   * release's revision (the latest a child reported) is only a label and the row of a child not
   * heard yet.
   */
  async place(fact: ApplicationFact, routes: ResolvedRoute[], turn: Turn): Promise<ResolvedRoute[]> {
    await turn.ready;
    try {
      return await this.placeNow(fact, routes);
    } finally {
      turn.done();
    }
  }

  private async placeNow(fact: ApplicationFact, routes: ResolvedRoute[]): Promise<ResolvedRoute[]> {
    const owner = appSetOwnerKey(fact);
    const revisions = fact.application.revisions;
    const first = revisions[0];
    if (owner === undefined || first === undefined) return routes;
    const byPipeline = new Map<string, string>();
    const out: ResolvedRoute[] = [];
    for (const route of routes) {
      const ours = route.idSource === 'images' && route.stage !== undefined && appSetKeyOfStage(route.stage) === owner;
      if (!ours) {
        out.push(route);
        continue;
      }
      let releaseId = byPipeline.get(route.pipeline.name);
      if (releaseId === undefined) byPipeline.set(route.pipeline.name, (releaseId = await this.rolloutOf(route.pipeline, owner, fact.target.name, revisions, fact.receivedAt)));
      out.push({ ...route, releaseId });
    }
    return out;
  }

  /** The rollout a child at these revisions belongs to (opening one when it is a change no open rollout takes). */
  async rolloutOf(pipeline: PipelineConfig, appSet: string, child: string, revisions: readonly string[], now: number): Promise<string> {
    const commits = [...new Set(revisions.map(commitKeyOf).filter((c): c is string => c !== undefined))];
    const p = pipeline.name;
    const keys = [
      this.keys.appSetRollouts(p, appSet),
      this.keys.releaseIndex(p),
      this.keys.openReleaseIndex(p),
      ...commits.map((c) => this.keys.rolloutOfCommit(p, c)),
      ...commits.map((c) => this.keys.announcedCommit(p, c)),
    ];
    const args = [child, revisions.join('\n'), revisionReleaseId(revisions[0] as string), String(now), String(joinWindowMs(this.config, pipeline, appSet)), String(Math.round(this.ttlMs)), String(KEPT_ROLLOUTS), String(commits.length)];
    // No numberOfKeys at definition: the key count, passed first, varies with the child's commits.
    const [releaseId] = await this.redis.glidepathRouteChild(String(keys.length), ...keys, ...args);
    return releaseId;
  }

  /** The ApplicationSet rollout a commit was routed to, if one was (a CI announcement of it joins that release). */
  async releaseOfCommit(pipeline: string, commit: string): Promise<string | undefined> {
    const key = commitKeyOf(commit);
    return key === undefined ? undefined : ((await this.redis.get(this.keys.rolloutOfCommit(pipeline, key))) ?? undefined);
  }

  /** CI announced `releaseId` for `commit` before any child ran it: the rollout that commit opens is that release. */
  async noteAnnounced(pipeline: string, commit: string, releaseId: string): Promise<void> {
    const key = commitKeyOf(commit);
    if (key !== undefined) await this.redis.set(this.keys.announcedCommit(pipeline, key), releaseId, 'PX', Math.round(this.ttlMs));
  }
}
