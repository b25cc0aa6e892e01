/** The UTC calendar day of `ms`, as `2026-12-02`: how charts label a day and roll-ups key one. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
