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
