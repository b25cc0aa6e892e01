/**
 * Two different approvers (requireTwoApprovers): the first approval of an object at one generation
 * and step is recorded in Redis; the action runs only when a second, different person approves.
 * A new generation or step is a new key, so an approval never carries over to what nobody saw.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';

export type SecondApproval =
  | { kind: 'first'; }
  | { kind: 'same-person' }
  | { kind: 'second'; firstApprover: string };

/* KEYS[1]; ARGV[1] user, ARGV[2] ttl ms. Records the first approver, or says who it was. */
const APPROVE_SCRIPT = `
local first = redis.call('GET', KEYS[1])
if not first then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {'first', ARGV[1]}
end
if first == ARGV[1] then return {'same', first} end
redis.call('DEL', KEYS[1])
return {'second', first}
`;

type RedisWithApprove = Redis & { glidepathApprove(key: string, user: string, ttlMs: string): Promise<[string, string]> };

export class ApprovalStore {
  private readonly redis: RedisWithApprove;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    /** How long a first approval waits for the second. */
    private readonly ttlMs = 24 * 3_600_000,
  ) {
    if (!('glidepathApprove' in redis)) redis.defineCommand('glidepathApprove', { numberOfKeys: 1, lua: APPROVE_SCRIPT });
    this.redis = redis as RedisWithApprove;
  }

  /** `object` names what is approved, including its generation and step. */
  async approve(object: string, userId: string): Promise<SecondApproval> {
    const [kind, first] = await this.redis.glidepathApprove(this.keys.firstApproval(object), userId, String(this.ttlMs));
    if (kind === 'first') return { kind: 'first' };
    if (kind === 'same') return { kind: 'same-person' };
    return { kind: 'second', firstApprover: first };
  }

  /** Puts a consumed first approval back when the second person's action failed. */
  async restore(object: string, userId: string): Promise<void> {
    await this.redis.set(this.keys.firstApproval(object), userId, 'PX', this.ttlMs, 'NX');
  }
}
