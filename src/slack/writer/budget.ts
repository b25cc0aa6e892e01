/**
 * Slack rate budgets shared by every replica: token buckets in Redis, refilled continuously.
 * `take` either spends a token or says how long to wait; a 429 blocks a bucket until its
 * Retry-After has passed, so every worker backs off, not just the one that was told.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';

export interface BudgetSpec {
  /** Calls allowed at once after a quiet period. */
  burst: number;
  /** Sustained calls per minute. */
  perMinute: number;
}

/*
 * KEYS[1] bucket hash
 * ARGV[1] now (ms), ARGV[2] burst, ARGV[3] tokens per ms, ARGV[4] tokens to keep back,
 * ARGV[5] "book" to take a token even if that means going into debt (a booked slot), or "try"
 * Output: 0 when a token is available now; otherwise the ms to wait. After "book" the token is
 * taken either way and the caller owns the slot at now + wait; after "try" nothing is taken.
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local book = ARGV[5] == 'book'
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'blockedUntil')
local blocked = tonumber(state[3] or '0')
if blocked > now then return blocked - now end
local tokens = tonumber(state[1] or tostring(burst))
local at = tonumber(state[2] or ARGV[1])
if now > at then tokens = math.min(burst, tokens + (now - at) * rate) end
local wait = 0
if book then
  tokens = tokens - 1
  if tokens < 0 then wait = math.ceil(-tokens / rate) end
elseif tokens < 1 + reserve then
  wait = math.ceil((1 + reserve - tokens) / rate)
else
  tokens = tokens - 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', KEYS[1], 3600000)
return wait
`;

type RedisWithTake = Redis & { glidepathSlackTake(key: string, ...args: string[]): Promise<number> };

export class SlackBudgets {
  private readonly redis: RedisWithTake;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly now: () => number = Date.now,
  ) {
    if (!('glidepathSlackTake' in redis)) redis.defineCommand('glidepathSlackTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis = redis as RedisWithTake;
  }

  /**
   * 0 when a call may go now (and its token is spent), otherwise the ms to wait. With `book`,
   * the token is spent even when the wait is not 0: the caller owns the slot at now + wait, so
   * callers are served first come, first served instead of racing at every refill. Without it,
   * nothing is spent unless `reserve` tokens remain for booked callers.
   */
  async take(name: string, spec: BudgetSpec, options: { reserve?: number; book?: boolean } = {}): Promise<number> {
    return this.redis.glidepathSlackTake(
      this.keys.slackBudget(name),
      String(this.now()),
      String(spec.burst),
      String(spec.perMinute / 60_000),
      String(options.reserve ?? 0),
      options.book ? 'book' : 'try',
    );
  }

  /** After a 429: nobody spends from this bucket until Slack's Retry-After has passed. */
  async block(name: string, ms: number): Promise<void> {
    const key = this.keys.slackBudget(name);
    const until = this.now() + ms;
    const current = Number((await this.redis.hget(key, 'blockedUntil')) ?? 0);
    if (until > current) await this.redis.hset(key, 'blockedUntil', String(until), 'tokens', '1', 'at', String(until));
  }
}
