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
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1] or tostring(burst))
local at = tonumber(state[2] or ARGV[1])
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate)
  at = now
end
-- After a 429, 'at' lies in the future: nothing is spendable before it.
local lead = at - now
local wait = 0
if book then
  tokens = tokens - 1
  if tokens < 0 then wait = lead + math.ceil(-tokens / rate) else wait = lead end
else
  if lead > 0 then return lead end
  if tokens < 1 + reserve then return math.ceil((1 + reserve - tokens) / rate) end
  tokens = tokens - 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], 3600000)
return wait
`;

/*
 * KEYS[1] bucket hash; ARGV[1] the time (ms) Slack said to wait until.
 * Moves the bucket's clock to then (if later), gives back the token of the refused call (its
 * job books again when it retries) and keeps at most one, so other booked slots keep their order.
 */
const BLOCK_SCRIPT = `
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1] or '0') + 1
local at = tonumber(state[2] or '0')
local untilMs = tonumber(ARGV[1])
if untilMs > at then at = untilMs end
if tokens > 1 then tokens = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], 3600000)
return 1
`;

type RedisWithTake = Redis & {
  glidepathSlackTake(key: string, ...args: string[]): Promise<number>;
  glidepathSlackBlock(key: string, untilMs: string): Promise<number>;
};

/** The writer's budgets. */
export interface WriterBudgets {
  /** chat.postMessage per channel (Slack: about 1/s, short bursts allowed). */
  postPerChannel: BudgetSpec;
  /** chat.update across the workspace (Slack Tier 3: 50+/min). */
  update: BudgetSpec;
  /** conversations.history / .replies reads that settle an ambiguous post (Tier 3 for internal apps). */
  history?: BudgetSpec;
}

export const DEFAULT_BUDGETS: WriterBudgets = {
  postPerChannel: { burst: 3, perMinute: 60 },
  update: { burst: 10, perMinute: 50 },
  history: { burst: 5, perMinute: 40 },
};

export class SlackBudgets {
  private readonly redis: RedisWithTake;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly now: () => number = Date.now,
  ) {
    if (!('glidepathSlackTake' in redis)) {
      redis.defineCommand('glidepathSlackTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
      redis.defineCommand('glidepathSlackBlock', { numberOfKeys: 1, lua: BLOCK_SCRIPT });
    }
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

  /**
   * After a 429: nothing is spent from this bucket until Slack's Retry-After has passed, then
   * one call may go. Slots already booked keep their order behind it.
   */
  async block(name: string, ms: number): Promise<void> {
    await this.redis.glidepathSlackBlock(this.keys.slackBudget(name), String(this.now() + ms));
  }

}
