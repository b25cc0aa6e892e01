/**
 * The latest state heard of each ApplicationSet a pipeline names, kept in Redis beside the release
 * records (`keys.appSetMembership`): step membership is a property of the ApplicationSet, not of a
 * release. Written whenever the worker processes an ApplicationSet fact, whether or not a release
 * takes it (one that arrives before any child opened its release opens none); read for each batch
 * of a pipeline that names an ApplicationSet and handed to the reducer (`ReduceContext.appSets`,
 * appset-known.ts), and for a child's routes (only to the stage of its step).
 *
 * Bounded: one hash per pipeline and ApplicationSet named in the config, holding one state (the
 * size of an ApplicationSet's status, which the record keeps too), expiring the longest a release
 * lives after its last write. Ordered: a write is a compare-and-set on the observation it replaces,
 * and never replaces a newer one (two workers, a redelivered older fact).
 */
import type { Redis } from 'ioredis';
import type { ConfigFile, PipelineConfig } from '../../config/file.js';
import { targetKey, type ApplicationSetFact, type Fact } from '../../facts/fact.js';
import type { Keys } from '../../store/keys.js';
import type { AppSetState } from '../record/appset-record.js';
import { appSetOwnerKey, appSetStateOf, compareAppSetStates, namedAppSets } from '../reduce/appset-known.js';
import type { KnownAppSets } from '../reduce/context.js';
import { decodeMembership, encodeMembership } from './appset-membership-codec.js';
import { childTargetKeys, pipelinesOfAppSet } from '../../routing/route-appset.js';
import type { TargetIndex } from './target-index.js';

/*
 * KEYS[1] the membership hash; ARGV[1] the observation expected there ("" for none), ARGV[2] the
 * new one, ARGV[3] the state JSON without its members, ARGV[4] TTL ms, ARGV[5] "1" to rewrite the
 * hash, ARGV[6] the number of member chunks, then chunk index/JSON pairs (the chunks that changed).
 */
const REPLACE_IF_UNCHANGED = `
if (redis.call('HGET', KEYS[1], 'v') or '') ~= ARGV[1] then return 0 end
local old = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
if ARGV[5] == '1' then redis.call('DEL', KEYS[1]) old = 0 end
local n = tonumber(ARGV[6])
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'state', ARGV[3], 'n', ARGV[6])
local i = 7
while i <= #ARGV do
  redis.call('HSET', KEYS[1], 'm' .. ARGV[i], ARGV[i + 1])
  i = i + 2
end
for c = n, old - 1 do redis.call('HDEL', KEYS[1], 'm' .. c) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`;

type Observation = Pick<AppSetState, 'uid' | 'generation' | 'resourceVersion' | 'heardAt'>;

function observationOf(state: AppSetState): string {
  const o: Observation = { uid: state.uid, generation: state.generation, resourceVersion: state.resourceVersion, heardAt: state.heardAt };
  return JSON.stringify(o);
}

export class AppSetMemberships {
  /** Parsed states by Redis key and observation: an unchanged state is parsed once, and stays the same object. */
  private readonly parsed = new Map<string, { observation: string; state: AppSetState }>();
  /**
   * Writes under way in this process, by key. A read waits for them: BullMQ hands one partition's
   * jobs out in queue order but runs them side by side, so without this a child queued after its
   * ApplicationSet (the watch lists those first, list-order.ts) could read before it was written.
   */
  private readonly writing = new Map<string, Promise<void>>();
  /** The member chunks Redis holds under each key at an observation (written or read here): a write sends the chunks that changed. */
  private readonly chunks = new Map<string, { observation: string; chunks: string[] }>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly ttlMs: number,
  ) {}

  /** Keeps the state an ApplicationSet fact carries, for each pipeline naming it, unless a newer one is kept. */
  async note(config: ConfigFile, fact: ApplicationSetFact): Promise<void> {
    const appSet = targetKey(fact.target);
    const pipelines = pipelinesOfAppSet(config, fact.target);
    // The state kept under the first key, when it is parsed here: its unchanged entries are reused.
    const first = pipelines[0];
    const state = appSetStateOf(fact, first ? this.parsed.get(this.keys.appSetMembership(first.name, appSet))?.state : undefined);
    // Every key is marked before the first await: a read started after this call waits for them.
    const writes = pipelines.map((pipeline) => this.track(this.keys.appSetMembership(pipeline.name, appSet), state));
    await Promise.all(writes);
  }

  private track(key: string, state: AppSetState): Promise<void> {
    const before = this.writing.get(key);
    const write = (before ?? Promise.resolve()).then(() => this.put(key, state));
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(key, settled);
    void settled.then(() => {
      if (this.writing.get(key) === settled) this.writing.delete(key);
    });
    return write;
  }

  private async put(key: string, state: AppSetState): Promise<void> {
    const next = observationOf(state);
    // A lost compare-and-set means another worker wrote in between: judge again against it.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.redis.hget(key, 'v');
      const order = compareAppSetStates(state, current ? (JSON.parse(current) as Observation) : undefined);
      if (order < 0) return;
      if (order === 0) {
        await this.redis.pexpire(key, Math.round(this.ttlMs));
        return;
      }
      const { head, chunks } = encodeMembership(state, this.parsed.get(key)?.state);
      const held = this.chunks.get(key);
      const partial = current !== null && held?.observation === current;
      const changed = chunks.flatMap((json, i) => (partial && held.chunks[i] === json ? [] : [String(i), json]));
      const saved = await this.redis.eval(REPLACE_IF_UNCHANGED, 1, key, current ?? '', next, head, String(Math.round(this.ttlMs)), partial ? '0' : '1', String(chunks.length), ...changed);
      if (saved === 1) {
        this.chunks.set(key, { observation: next, chunks });
        // What was written is what a read here would decode: kept parsed, so the batch that reads it next does not read it back.
        this.parsed.set(key, { observation: next, state });
        return;
      }
    }
  }

  /** The latest state kept of each ApplicationSet the pipeline names (undefined: it names none). */
  async of(pipeline: PipelineConfig): Promise<KnownAppSets | undefined> {
    const appSets = namedAppSets(pipeline);
    if (appSets.length === 0) return undefined;
    const known: Record<string, AppSetState> = {};
    for (const appSet of appSets) {
      const key = this.keys.appSetMembership(pipeline.name, appSet);
      await this.writing.get(key);
      const observation = await this.redis.hget(key, 'v');
      if (!observation) continue;
      let cached = this.parsed.get(key);
      if (cached?.observation !== observation) {
        const decoded = decodeMembership(await this.redis.hgetall(key));
        if (!decoded) continue;
        this.parsed.set(key, (cached = { observation: decoded.observation, state: decoded.state }));
        if (decoded.chunks) this.chunks.set(key, { observation: decoded.observation, chunks: decoded.chunks });
      }
      known[appSet] = cached.state;
    }
    return known;
  }
}

/**
 * What routing a fact needs from the ApplicationSet side: for an ApplicationSet fact (its state
 * noted first), per pipeline the releases its children run (each with one child that runs it:
 * routing takes the set); for a child Application, the known
 * membership of the pipelines it may go to.
 */
export async function appSetRouteInputs(
  config: ConfigFile,
  fact: Fact,
  targets: Pick<TargetIndex, 'releasesAmong'>,
  memberships: AppSetMemberships | undefined,
): Promise<{ children: Map<string, ReadonlyMap<string, string>>; known: Map<string, KnownAppSets> }> {
  const children = new Map<string, ReadonlyMap<string, string>>();
  const known = new Map<string, KnownAppSets>();
  if (fact.kind === 'application-set') {
    await memberships?.note(config, fact);
    const keys = childTargetKeys(fact);
    for (const pipeline of pipelinesOfAppSet(config, fact.target)) children.set(pipeline.name, await targets.releasesAmong(pipeline.name, keys));
  } else if (fact.kind === 'application' && memberships) {
    const owner = appSetOwnerKey(fact);
    for (const pipeline of config.pipelines) {
      if (owner === undefined || !namedAppSets(pipeline).includes(owner)) continue;
      const states = await memberships.of(pipeline);
      if (states) known.set(pipeline.name, states);
    }
  }
  return { children, known };
}
