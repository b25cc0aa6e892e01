/**
 * Turns taken in order, per key: a turn is ready once every turn taken before it with the same
 * key is done. The worker reduces a job's facts, and several jobs, at once; each fact's reads
 * before routing take their own time (a cached ApplicationSet membership answers at once, a
 * changed one reads Redis again), so a later fact can reach a decision before an earlier one.
 * Most decisions do not care (the reducer orders observations itself), but which rollout of an
 * ApplicationSet a child joins depends on what the index holds from the facts before it
 * (appset-rollouts.ts): a child's newer fact placed before its older one joined the previous
 * rollout at the new commit. Taken where the facts are handed in (their queue order), a turn puts
 * that decision back in that order, and holds up nothing else.
 */
export interface Turn {
  /** Resolves once every earlier turn of the key is done. */
  readonly ready: Promise<void>;
  /** This turn is over (idempotent): the next one goes once every earlier one has gone too. */
  done(): void;
}

/** A turn that waits for nothing and holds up no one. */
export const NO_WAIT: Turn = { ready: Promise.resolve(), done: () => {} };

export class TurnsInOrder {
  /** Per key, the turn last taken: resolved once it and every turn before it are done. */
  private readonly last = new Map<string, Promise<void>>();

  /** Take the next turn of `key` (undefined: a turn that waits for nothing and holds up no one). */
  take(key: string | undefined): Turn {
    if (key === undefined) return NO_WAIT;
    const ready = this.last.get(key) ?? Promise.resolve();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Done out of order (a fact that failed early), a turn still holds the next until those before it are done.
    const gone = Promise.all([ready, released]).then(() => {
      if (this.last.get(key) === gone) this.last.delete(key);
    });
    this.last.set(key, gone);
    return { ready, done: release };
  }

  /** Keys with a turn not yet gone (bounded by the facts in hand). */
  get size(): number {
    return this.last.size;
  }
}
