/**
 * Time source for the simulated controllers. Tests drive a FakeClock so that a 10-minute pause or
 * a 120 s reconcile period passes in one call, without sleeping; the sandbox uses the real clock.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once, `delayMs` from now on this clock. */
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Lets promise continuations (HTTP sends, awaited writes) run between timers. */
export async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start: number | string = '2026-08-20T09:00:00Z') {
    this.current = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): TimerHandle {
    const timer: PendingTimer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Number of timers still waiting, for tests that want to prove nothing is scheduled. */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /**
   * Moves time forward, firing due timers in order; each timer sees `now()` equal to its due time,
   * and asynchronous work it starts is given a chance to finish before the next one fires.
   */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    await settle();
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = end;
    await settle();
  }
}

export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
