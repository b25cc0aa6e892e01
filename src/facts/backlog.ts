/**
 * Ingest's backpressure: how many facts wait in the facts queues for a reducer, and whether one
 * more may be accepted (INGEST_MAX_QUEUED_FACTS). Past the bound the webhook answers 503 with
 * Retry-After, so a sender that outruns the workers is told to come back instead of filling
 * Redis (and this process's memory) without bound; what was accepted is still reduced.
 *
 * Reading the depth on every request would add a Redis round trip per fact; it is read at most
 * every `refreshMs` instead, without holding any request up, and the facts admitted since are
 * counted on top. The estimate can only be high (facts reduced since the read are not taken
 * off until the next read), so a burst between two reads cannot pass the bound.
 */

/** What the backlog reads: the facts waiting for a reducer, over every partition. */
export interface WaitingFacts {
  waiting(): Promise<number>;
}

export class FactBacklog {
  /** Facts waiting at the last read. */
  private known = 0;
  /** Admitted facts whose add has not answered yet. */
  private inFlight = 0;
  /** Facts queued since the last read began, or just before it: counted on top of it, to stay high. */
  private queuedSince = 0;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading = false;

  constructor(
    private readonly queue: WaitingFacts,
    /** Facts that may wait before ingest refuses more; 0 turns backpressure off. */
    readonly bound: number,
    private readonly refreshMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** The facts thought to be waiting now: the last read, plus those queued or being queued since. */
  get estimate(): number {
    return this.known + this.queuedSince + this.inFlight;
  }

  /**
   * True, and the fact is counted, when one more fact may be queued; false when the queues are
   * at the bound (nothing counted). Every admitted fact is settled once its add has answered.
   */
  admit(): boolean {
    if (this.bound === 0) return true;
    this.refresh();
    if (this.estimate >= this.bound) return false;
    this.inFlight++;
    return true;
  }

  /** An admitted fact's add answered: queued (it waits now), or not (it never will). */
  settle(queued: boolean): void {
    if (this.bound === 0) return;
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (queued) this.queuedSince++;
  }

  /** Reads the depth again when the last read is older than `refreshMs`; one read at a time. */
  private refresh(): void {
    if (this.reading || this.now() - this.readAt < this.refreshMs) return;
    this.reading = true;
    this.readAt = this.now();
    // Facts whose add had answered when the read was sent are in what it reads; later ones may not be.
    const counted = this.queuedSince;
    this.queue.waiting().then(
      (waiting) => {
        this.known = waiting;
        this.queuedSince = Math.max(0, this.queuedSince - counted);
        this.reading = false;
      },
      // Redis unreachable: the estimate stays as it is; the add itself answers 503 then.
      () => {
        this.reading = false;
      },
    );
  }
}
