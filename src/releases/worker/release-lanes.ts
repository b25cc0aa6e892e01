/**
 * One lane per release in this process: facts of the same release wait for each other and are
 * reduced together, with one read and one compare-and-set for the whole batch. Across processes
 * the compare-and-set still keeps them right; within one, they no longer fight over the record.
 */

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(err: unknown): void;
}

export class ReleaseLanes<I, O> {
  private readonly lanes = new Map<string, Pending<I, O>[]>();

  constructor(
    private readonly runBatch: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 64,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return this.submitAll(key, [item]).then((results) => results[0] as O);
  }

  /** Several items of one lane at once: queued together, so they are reduced in one batch when the lane is idle. */
  submitAll(key: string, items: readonly I[]): Promise<O[]> {
    const promises: Promise<O>[] = [];
    const pending: Pending<I, O>[] = [];
    for (const item of items) promises.push(new Promise<O>((resolve, reject) => pending.push({ item, resolve, reject })));
    const queued = this.lanes.get(key);
    if (queued) queued.push(...pending);
    else if (pending.length > 0) {
      this.lanes.set(key, pending);
      // Drained from the next turn of the event loop, not this one: the other facts of the job
      // (and of jobs taken with it) reach their lanes within this turn and join the first batch.
      setImmediate(() => void this.drain(key));
    }
    return Promise.all(promises);
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const queued = this.lanes.get(key);
      if (!queued || queued.length === 0) {
        this.lanes.delete(key);
        return;
      }
      const batch = queued.splice(0, this.maxBatch);
      try {
        const results = await this.runBatch(key, batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i] as O));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
  }
}

/** The indexes of `items` by lane, lanes in the order they first appear. */
export function indexesByLane<T>(items: readonly T[], laneOf: (item: T) => string): Map<string, number[]> {
  const lanes = new Map<string, number[]>();
  items.forEach((item, i) => {
    const key = laneOf(item);
    const at = lanes.get(key);
    if (at) at.push(i);
    else lanes.set(key, [i]);
  });
  return lanes;
}
