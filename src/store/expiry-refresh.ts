/**
 * When to move a key's expiry on. A key that must live `ttl` after its last write used to get
 * a PEXPIRE on every write, which on the reducer's path is a command per key per fact for
 * nothing: the expiry moved by seconds. Instead the key is given `ttl + interval`, and moved on
 * at most once per `interval` per key from this process (and always on the first write this
 * process makes, e.g. after a restart): it then expires between `ttl` and `ttl + interval`
 * after its last write, never earlier than before.
 */

/** An hour: the most a key outlives its retention. */
export const MAX_EXPIRY_SLACK_MS = 3_600_000;
/** Keys remembered before the ones not due anyway are forgotten (one per pipeline, release or Application written). */
const REMEMBERED = 10_000;

export class ExpiryRefresh {
  private readonly movedAt = new Map<string, number>();
  /** How long a key may go without its expiry being moved on. */
  readonly intervalMs: number;

  /** `shortestTtlMs`: the shortest TTL this serves; the interval is at most 1% of it. */
  constructor(shortestTtlMs: number) {
    this.intervalMs = Math.max(1, Math.min(MAX_EXPIRY_SLACK_MS, Math.floor(shortestTtlMs / 100)));
  }

  /** The TTL to give a key that must live `ttlMs` after its last write. */
  ttl(ttlMs: number): number {
    return Math.round(ttlMs) + this.intervalMs;
  }

  /** Whether this write should move `key`'s expiry on; noted as done if so. */
  due(key: string, now = Date.now()): boolean {
    const at = this.movedAt.get(key);
    if (at !== undefined && now >= at && now - at < this.intervalMs) return false;
    if (this.movedAt.size >= REMEMBERED) this.sweep(now);
    this.movedAt.set(key, now);
    return true;
  }

  /**
   * Keeps the memory bounded. Keys not due anyway go first; when every remembered key is recent
   * (a fleet of more keys than REMEMBERED), all are forgotten at once rather than scanned again on
   * each write: a forgotten key only costs one PEXPIRE sooner, never a missed expiry.
   */
  private sweep(now: number): void {
    for (const [k, t] of this.movedAt) if (now - t >= this.intervalMs) this.movedAt.delete(k);
    if (this.movedAt.size >= REMEMBERED) this.movedAt.clear();
  }

  /** Forget `key` (its expiry is moved on at its next write), e.g. after a write that failed. */
  forget(key: string): void {
    this.movedAt.delete(key);
  }
}
