/**
 * A lease in Redis: one holder at a time, renewed well before it expires, taken over by another
 * replica when the holder stops renewing (it died, or lost Redis). Redis rather than a
 * `coordination.k8s.io` Lease because every replica already shares this Redis, a lease per
 * watched cluster would otherwise need write access to Leases in that cluster (or tie the watcher
 * of cluster B to the API server of cluster A), and the queue the watcher feeds is in Redis anyway:
 * a holder that cannot reach Redis cannot deliver facts, so it should not hold the lease.
 *
 * A lease is also a fence. A holder can be paused (SIGSTOP, a long GC, a frozen VM) past its TTL
 * and wake with work in hand after another replica took the lease; nothing in the holder can tell
 * it was paused. So each acquisition raises the lease's epoch (a fencing token), the holder keeps
 * its epoch, and the writes it makes on the lease's behalf carry it: the storage refuses a token
 * older than one it has already seen (store.ts), and side effects check the lease first
 * (FENCE_CHECK). Kleppmann's fencing tokens, as BullMQ's job locks do with their tokens.
 */
import type { Redis } from 'ioredis';

/** Renews only a lease this holder still has (compare-and-expire). */
export const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Releases only a lease this holder still has. */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * KEYS[1] lease, KEYS[2] its epoch (same slot: Keys.*LeaseEpoch); ARGV[1] holder, ARGV[2] lease
 * TTL ms, ARGV[3] epoch TTL ms. Takes a free lease and returns its new epoch, else 0.
 * The epoch is the larger of the last one + 1 and Redis' clock in microseconds: it only grows even
 * if the epoch key is lost (expired, a restore without it), so a record that kept a high epoch
 * never locks out every later holder. Hence the epoch key may carry a TTL like every other key.
 * Microseconds, not milliseconds: two acquisitions in one millisecond with the key lost between
 * them would otherwise get the same epoch. (2^53 µs is 285 years; epochs written in ms by earlier
 * versions are all lower, so the upgrade keeps them growing.)
 */
export const ACQUIRE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if epoch < now then epoch = now end
redis.call('SET', KEYS[2], string.format('%d', epoch), 'PX', ARGV[3])
return epoch
`;

/** KEYS[1] lease, KEYS[2] its epoch; ARGV[1] holder, ARGV[2] epoch. 1 while this holder still has the lease it took at that epoch. */
export const FENCE_CHECK = `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[2] then return 1 end
return 0
`;

/** How long an epoch key lives after the last acquisition (any TTL is safe: see ACQUIRE). */
export const EPOCH_TTL_MS = 7 * 86_400_000;

/** Takes the lease if free: its epoch, or undefined. */
export async function acquireLease(redis: Redis, key: string, epochKey: string, holder: string, ttlMs: number): Promise<number | undefined> {
  const epoch = Number(await redis.eval(ACQUIRE, 2, key, epochKey, holder, String(ttlMs), String(EPOCH_TTL_MS)));
  return epoch > 0 ? epoch : undefined;
}

/** Whether `holder` still has the lease it took at `epoch` (one round trip). */
export async function stillHolds(redis: Redis, key: string, epochKey: string, holder: string, epoch: number): Promise<boolean> {
  return (await redis.eval(FENCE_CHECK, 2, key, epochKey, holder, String(epoch))) === 1;
}

export interface LeaseEvents {
  acquired(epoch: number): void;
  lost(): void;
}

export interface LeaseOptions {
  /** The lease's epoch key (same slot as the lease). */
  epochKey: string;
  /** Where a lost lease is told (at warn: another replica may be doing this work already). */
  logger?: { warn(fields: object, message: string): void };
  /** Names the lease in the log line. */
  what?: Record<string, string>;
  now?: () => number;
}

export class RedisLease {
  private timer?: NodeJS.Timeout;
  private held = false;
  private stopped = false;
  private epochHeld = 0;
  /** Local time of the last renewal (or acquisition) Redis confirmed. */
  private confirmedAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly events: LeaseEvents,
    private readonly options: LeaseOptions,
  ) {}

  /**
   * Held, as far as this process can tell without asking Redis: taken, and confirmed within its
   * TTL. A process that wakes from a pause longer than the TTL reads false before its next tick.
   */
  get isHeld(): boolean {
    return this.held && this.now() - this.confirmedAt < this.ttlMs;
  }

  /** The fencing epoch of the current holding (0 when not held). */
  get epoch(): number {
    return this.held ? this.epochHeld : 0;
  }

  private now(): number {
    return this.options.now ? this.options.now() : performance.now();
  }

  /** Tries at once, then every third of the TTL: renews while held, tries to take it while not. */
  start(): this {
    void this.tick();
    return this;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), Math.max(50, Math.floor(this.ttlMs / 3)));
  }

  private async tick(): Promise<void> {
    try {
      if (this.held) {
        const asked = this.now();
        const renewed = (await this.redis.eval(RENEW, 1, this.key, this.holder, String(this.ttlMs))) === 1;
        if (!renewed) this.lose('not renewed in time: another replica may hold it');
        else this.confirmedAt = asked;
      } else {
        const asked = this.now();
        const epoch = await acquireLease(this.redis, this.key, this.options.epochKey, this.holder, this.ttlMs);
        if (epoch !== undefined && !this.stopped) {
          this.held = true;
          this.epochHeld = epoch;
          this.confirmedAt = asked;
          this.events.acquired(epoch);
        }
      }
    } catch {
      // Redis unreachable: a holder cannot know it still holds the lease past its TTL, so it stops.
      if (this.held) this.lose('Redis unreachable: it cannot be renewed');
    }
    this.schedule();
  }

  private lose(why?: string): void {
    if (why) this.options.logger?.warn({ ...this.options.what, key: this.key, epoch: this.epochHeld, why }, 'lease lost');
    this.held = false;
    this.events.lost();
  }

  /** Stops renewing; `release` hands the lease over at once instead of after the TTL. */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.held && (options.release ?? true)) await this.redis.eval(RELEASE, 1, this.key, this.holder).catch(() => undefined);
    if (this.held) this.lose();
  }
}
