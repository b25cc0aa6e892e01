/**
 * Which fact partitions this worker replica works. Each partition has a lease in Redis (one
 * holder at a time, renewed every third of its TTL, see RedisLease for why Redis); every
 * replica beats in a set of live replicas and aims for ceil(K / live replicas) partitions.
 * A replica holding more lets the extra ones go (after its worker finished the jobs in hand,
 * so a release is never reduced by two processes at once), a replica holding fewer takes free
 * ones. A replica that dies stops beating and renewing: its leases expire and the others take
 * them over; BullMQ's stalled-job check hands its unfinished jobs to the new holder.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RELEASE, RENEW, acquireLease, stillHolds } from '../../store/lease.js';
import type { Keys } from '../../store/keys.js';

export interface PartitionHandlers {
  /** Start working the partition (its lease is held, taken at fencing epoch `epoch`). */
  acquired(partition: number, epoch: number): void;
  /** Stop working it and finish the jobs in hand; the lease is given back once this resolves. */
  release(partition: number): Promise<void>;
  /** The lease was lost (not renewed in time): stop at once. */
  lost(partition: number): void;
}

export interface PartitionStatus {
  partitions: number;
  held: number[];
  /** ceil(K / live replicas): what this replica aims to hold. */
  target: number;
  live: number;
  /** Time of the last tick that reached Redis (0: none yet). */
  lastTickAt: number;
}

export class PartitionLeases {
  private readonly held = new Set<number>();
  /** The fencing epoch each held partition was taken at (lease.ts ACQUIRE). */
  private readonly epochs = new Map<number, number>();
  /** Local monotonic time each held lease was last confirmed by Redis (taken or renewed). */
  private readonly confirmedAt = new Map<number, number>();
  private readonly releasing = new Set<number>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private live = 0;
  private lastTickAt = 0;
  private readonly order: number[];

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    readonly replicaId: string,
    private readonly ttlMs: number,
    private readonly handlers: PartitionHandlers,
    private readonly now: () => number = Date.now,
  ) {
    // Each replica tries partitions from its own starting point, so two starting at once rarely race for the same ones.
    const k = keys.partitions;
    const start = createHash('sha256').update(replicaId).digest().readUInt32BE(0) % k;
    this.order = Array.from({ length: k }, (_, i) => (start + i) % k);
  }

  /** Resolves after the first tick: a lone replica holds every partition before it reports ready. */
  async start(): Promise<this> {
    await this.tick();
    return this;
  }

  status(): PartitionStatus {
    return {
      partitions: this.keys.partitions,
      held: [...this.held].sort((a, b) => a - b),
      target: this.target(),
      live: this.live,
      lastTickAt: this.lastTickAt,
    };
  }

  /**
   * Whether this replica works what it should: it reached Redis within a lease TTL (otherwise
   * its leases may be someone else's by now), and it holds a partition whenever there are at
   * least as many partitions as replicas.
   */
  healthy(): { ok: boolean; reason?: string } {
    if (this.now() - this.lastTickAt > this.ttlMs) return { ok: false, reason: 'partition leases not renewed within their TTL (Redis unreachable?)' };
    if (this.held.size === 0 && this.keys.partitions >= Math.max(1, this.live)) return { ok: false, reason: `holds none of the ${this.keys.partitions} fact partitions (${this.live} replicas live)` };
    return { ok: true };
  }

  private target(): number {
    return Math.ceil(this.keys.partitions / Math.max(1, this.live));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), Math.max(50, Math.floor(this.ttlMs / 3)));
  }

  private async tick(): Promise<void> {
    try {
      await this.beat();
      await this.renew();
      this.rebalance();
      await this.takeFree();
      this.lastTickAt = this.now();
    } catch {
      // Redis unreachable: a holder cannot know it still holds its leases past their TTL.
      if (this.now() - this.lastTickAt > this.ttlMs) for (const p of [...this.held]) this.lose(p);
    }
    this.schedule();
  }

  private async beat(): Promise<void> {
    const now = this.now();
    const key = this.keys.reducerReplicas();
    const replies = await this.redis
      .multi()
      .zadd(key, now, this.replicaId)
      .zremrangebyscore(key, '-inf', now - this.ttlMs)
      .pexpire(key, this.ttlMs * 3)
      .zcard(key)
      .exec();
    const [err, live] = replies?.[3] ?? [new Error('the heartbeat MULTI was discarded'), 0];
    if (err) throw err;
    this.live = Number(live);
  }

  private async renew(): Promise<void> {
    for (const p of [...this.held]) {
      const asked = performance.now();
      const renewed = (await this.redis.eval(RENEW, 1, this.keys.partitionLease(p), this.replicaId, String(this.ttlMs))) === 1;
      if (renewed) this.confirmedAt.set(p, asked);
      else if (this.held.has(p)) this.lose(p);
    }
  }

  /**
   * Whether this replica still works partition `p` under the lease it took at `epoch`, for the
   * side effects of a job (the record's own write is fenced inside its save script). Locally:
   * held, same epoch, and confirmed by Redis less than a TTL ago by our own monotonic clock (the
   * renewal that confirmed it set the expiry at least a TTL after we asked, so nobody can have
   * taken it yet); a process waking from a pause longer than the TTL answers false at once.
   * Renewals come every third of the TTL, so a confirmation older than half of it means this
   * process was held up: only then is Redis asked (FENCE_CHECK), and a fact costs no round trip.
   */
  async holds(p: number, epoch: number): Promise<boolean> {
    const confirmed = this.confirmedAt.get(p);
    if (!this.held.has(p) || this.epochs.get(p) !== epoch || confirmed === undefined) return false;
    const age = performance.now() - confirmed;
    if (age >= this.ttlMs) return false;
    if (age < this.ttlMs / 2) return true;
    return stillHolds(this.redis, this.keys.partitionLease(p), this.keys.partitionLeaseEpoch(p), this.replicaId, epoch);
  }

  /** Lets go of partitions above the target: the worker finishes, then the lease is given back. */
  private rebalance(): void {
    const extra = this.held.size - this.releasing.size - this.target();
    if (extra <= 0) return;
    // Let go of the ones furthest along this replica's own order (it keeps its first choices).
    const candidates = this.order.filter((p) => this.held.has(p) && !this.releasing.has(p)).reverse().slice(0, extra);
    for (const p of candidates) void this.giveBack(p);
  }

  private async giveBack(p: number): Promise<void> {
    this.releasing.add(p);
    try {
      await this.handlers.release(p);
    } finally {
      this.releasing.delete(p);
      if (this.held.delete(p)) await this.redis.eval(RELEASE, 1, this.keys.partitionLease(p), this.replicaId).catch(() => undefined);
    }
  }

  private async takeFree(): Promise<void> {
    if (this.stopped) return;
    for (const p of this.order) {
      if (this.held.size - this.releasing.size >= this.target()) return;
      if (this.held.has(p)) continue;
      const asked = performance.now();
      const epoch = await acquireLease(this.redis, this.keys.partitionLease(p), this.keys.partitionLeaseEpoch(p), this.replicaId, this.ttlMs);
      if (epoch !== undefined && !this.stopped) {
        this.held.add(p);
        this.epochs.set(p, epoch);
        this.confirmedAt.set(p, asked);
        this.handlers.acquired(p, epoch);
      }
    }
  }

  private lose(p: number): void {
    this.held.delete(p);
    this.confirmedAt.delete(p);
    this.handlers.lost(p);
  }

  /** Stops: every worker finishes its jobs in hand, then the leases go back at once and this replica leaves the live set. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([...this.held].filter((p) => !this.releasing.has(p)).map((p) => this.giveBack(p)));
    while (this.releasing.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.redis.zrem(this.keys.reducerReplicas(), this.replicaId).catch(() => undefined);
  }
}
