/**
 * One log line per key per interval, with the count of what it stood for: a cluster sending a
 * stream of objects Glidepath cannot use is worth a line a minute, not a line each (a log flood is
 * its own outage).
 */
export class LogLimiter {
  private readonly state = new Map<string, { lastAt: number; held: number }>();

  constructor(
    private readonly everyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes one occurrence; returns how many to report (this one and those held back) when a line is due. */
  take(key: string): number | undefined {
    const at = this.now();
    const s = this.state.get(key);
    if (!s) {
      this.state.set(key, { lastAt: at, held: 0 });
      return 1;
    }
    s.held += 1;
    if (at - s.lastAt < this.everyMs) return undefined;
    const count = s.held;
    s.held = 0;
    s.lastAt = at;
    return count;
  }
}
