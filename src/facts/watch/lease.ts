/**
 * A lease in Redis: one holder at a time, renewed well before it expires, taken over by another
 * replica when the holder stops renewing (it died, or lost Redis). Redis rather than a
 * `coordination.k8s.io` Lease because every replica already shares this Redis, a lease per
 * watched cluster would otherwise need write access to Leases in that cluster (or tie the watcher
 * of cluster B to the API server of cluster A), and the queue the watcher feeds is in Redis anyway:
 * a holder that cannot reach Redis cannot deliver facts, so it should not hold the lease.
 */
import type { Redis } from 'ioredis';

/** Renews only a lease this holder still has (compare-and-expire). */
export const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Releases only a lease this holder still has. */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface LeaseEvents {
  acquired(): void;
  lost(): void;
}

export class RedisLease {
  private timer?: NodeJS.Timeout;
  private held = false;
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly events: LeaseEvents,
  ) {}

  get isHeld(): boolean {
    return this.held;
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
        const renewed = (await this.redis.eval(RENEW, 1, this.key, this.holder, String(this.ttlMs))) === 1;
        if (!renewed) this.lose();
      } else {
        const taken = (await this.redis.set(this.key, this.holder, 'PX', this.ttlMs, 'NX')) === 'OK';
        if (taken && !this.stopped) {
          this.held = true;
          this.events.acquired();
        }
      }
    } catch {
      // Redis unreachable: a holder cannot know it still holds the lease past its TTL, so it stops.
      if (this.held) this.lose();
    }
    this.schedule();
  }

  private lose(): void {
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
