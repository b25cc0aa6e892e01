/** Waits for a condition the system reaches asynchronously. Not a timing assertion: the limit only ends a hung test. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false>, what: string, limitMs = 15_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Advances a fake clock in steps until `done` holds, letting watches over real HTTP and the
 * controllers react between steps; throws if it never does. Not a timing assertion: the step
 * count only ends a hung test.
 */
export async function advanceClockUntil(clock: { advance(ms: number): Promise<void> }, done: () => boolean, what: string, maxSteps = 120, stepMs = 500): Promise<void> {
  for (let i = 0; i < maxSteps && !done(); i++) {
    await clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 10));
  }
  if (!done()) throw new Error(`never happened: ${what}`);
}
