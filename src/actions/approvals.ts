/**
 * The approval tally of one state (quorum.ts decides who counts and how many are needed): the
 * people who approved exactly that state, in order, in one Redis list per state. One Lua script
 * adds a person and says whether the quorum is met, so two clicks at once (two replicas, a double
 * click) can never both be the approval that acts: the one that meets it marks the list
 * `!reached`, and every later approval of that state is told it was met already. A new
 * generation, pod hash, revision, Freight or step is another key, so an approval never carries
 * over to what its person did not see; each list expires on its own.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';

export type TallyResult =
  /** Counted; the quorum is not met yet. `approvers` in order, this person last. */
  | { kind: 'counted'; approvers: string[] }
  /** This person's approval met the quorum: act now. */
  | { kind: 'reached'; approvers: string[] }
  /** This person approved this state already; nothing changed. */
  | { kind: 'same-person'; approvers: string[] }
  /** The quorum of this state was met already (its action was taken, or is being taken), whoever asks. */
  | { kind: 'already-reached'; approvers: string[] };

const REACHED = '!reached';

/* KEYS[1] tally; ARGV[1] user, ARGV[2] required, ARGV[3] ttl ms. */
const TALLY_SCRIPT = `
local list = redis.call('LRANGE', KEYS[1], 0, -1)
local reached = list[#list] == '${REACHED}'
if reached then
  table.remove(list)
  return {'already', unpack(list)}
end
for _, u in ipairs(list) do
  if u == ARGV[1] then return {'same', unpack(list)} end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
table.insert(list, ARGV[1])
if #list >= tonumber(ARGV[2]) then
  redis.call('RPUSH', KEYS[1], '${REACHED}')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'reached', unpack(list)}
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'counted', unpack(list)}
`;

/* KEYS[1] tally; ARGV[1] user, ARGV[2] ttl ms. Undoes the approval that met the quorum (its action did not go through). */
const REOPEN_SCRIPT = `
local last = redis.call('LINDEX', KEYS[1], -1)
if last ~= '${REACHED}' then return 0 end
redis.call('RPOP', KEYS[1])
if redis.call('LINDEX', KEYS[1], -1) == ARGV[1] then redis.call('RPOP', KEYS[1]) end
if redis.call('LLEN', KEYS[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

type RedisWithTally = Redis & {
  glidepathTallyApproval(key: string, user: string, required: string, ttlMs: string): Promise<string[]>;
  glidepathReopenTally(key: string, user: string, ttlMs: string): Promise<number>;
};

const KINDS: Record<string, TallyResult['kind']> = { counted: 'counted', reached: 'reached', same: 'same-person', already: 'already-reached' };

export class ApprovalStore {
  private readonly redis: RedisWithTally;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    /** How long approvals of one state wait for the rest of the quorum. */
    private readonly ttlMs = 24 * 3_600_000,
  ) {
    if (!('glidepathTallyApproval' in redis)) {
      redis.defineCommand('glidepathTallyApproval', { numberOfKeys: 1, lua: TALLY_SCRIPT });
      redis.defineCommand('glidepathReopenTally', { numberOfKeys: 1, lua: REOPEN_SCRIPT });
    }
    this.redis = redis as RedisWithTally;
  }

  /** `state` names exactly what is approved (the intent's `expected`). */
  async approve(state: string, userId: string, required: number): Promise<TallyResult> {
    const [kind, ...approvers] = await this.redis.glidepathTallyApproval(this.keys.approvalTally(state), userId, String(required), String(this.ttlMs));
    return { kind: KINDS[kind ?? ''] ?? 'counted', approvers };
  }

  /** The approval that met the quorum is taken back when its action did not go through; the others stand. */
  async reopen(state: string, userId: string): Promise<void> {
    await this.redis.glidepathReopenTally(this.keys.approvalTally(state), userId, String(this.ttlMs));
  }
}
