/**
 * The fence a reducer job works under: the epoch of its partition's lease when the job's Worker
 * started (lease.ts), and a check that the lease is still held. A job in hand when its process
 * paused past the lease's TTL carries the old epoch; its record write is refused by the save
 * script (store.ts), its effects are not dispatched, and the new holder does both instead.
 */
export interface Fence {
  /** The partition lease's epoch this job's Worker works under. */
  epoch: number;
  /** Whether the lease is still held at that epoch (by the local clock; Redis is asked only when a renewal is late). */
  holds(): Promise<boolean>;
}

/** A write refused because a newer lease holder has written (or holds the lease) since. */
export class FencedWriteError extends Error {
  override readonly name = 'FencedWriteError';
  constructor(
    readonly what: 'record' | 'dispatch',
    where: string,
    readonly epoch: number,
  ) {
    super(`${what} of ${where} refused: the lease taken at epoch ${epoch} is no longer held (another replica took it over)`);
  }
}

/** The oldest fence of a batch (all of one partition): a batch is as stale as its staleest job. */
export function oldestFence(fences: readonly (Fence | undefined)[]): Fence | undefined {
  let oldest: Fence | undefined;
  for (const f of fences) if (f && (!oldest || f.epoch < oldest.epoch)) oldest = f;
  return oldest;
}
