/**
 * Signatures of Slack requests already received. A signed request replayed inside the 5-minute
 * window would otherwise run its command or click again; Slack signs every delivery afresh
 * (`v0:<timestamp>:<body>`), so a signature seen twice is a replay.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';

export interface SeenSlackRequests {
  /** True the first time this signature is seen; false for a replay. Only verified signatures are recorded. */
  firstSighting(signature: string, rememberForMs: number): Promise<boolean>;
}

/** Shared by every Glidepath replica on the Redis, so a replay to another replica is refused too. */
export class RedisSeenSlackRequests implements SeenSlackRequests {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async firstSighting(signature: string, rememberForMs: number): Promise<boolean> {
    const set = await this.redis.set(this.keys.slackSeenRequest(signature), '1', 'PX', Math.ceil(rememberForMs), 'NX');
    return set === 'OK';
  }
}

/** One process only: for a Bolt app built without Redis (tests of the Slack surface). */
export class MemorySeenSlackRequests implements SeenSlackRequests {
  private readonly expiresAt = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async firstSighting(signature: string, rememberForMs: number): Promise<boolean> {
    const now = this.now();
    for (const [seen, expiry] of this.expiresAt) if (expiry <= now) this.expiresAt.delete(seen);
    if (this.expiresAt.has(signature)) return false;
    this.expiresAt.set(signature, now + rememberForMs);
    return true;
  }
}
