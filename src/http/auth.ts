import { createHash, timingSafeEqual } from 'node:crypto';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison that does not leak the length either. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * What a presented token stands for in `tokens` (token → value), or undefined. Every token is
 * compared, so the time taken does not tell which (or whether any) token was close; the presented
 * token is digested once per call, not once per stored token.
 */
export function valueOfToken<T>(tokens: ReadonlyMap<string, T>, presented: string | undefined): T | undefined {
  if (presented === undefined) return undefined;
  const wanted = digest(presented);
  let found: T | undefined;
  for (const [stored, value] of digestsOf(tokens)) {
    if (timingSafeEqual(stored, wanted)) found = value;
  }
  return found;
}

/** The stored tokens' digests, made once per token map instead of on every request (token maps are built from the env once and never changed). */
const digested = new WeakMap<ReadonlyMap<string, unknown>, [Buffer, unknown][]>();
function digestsOf<T>(tokens: ReadonlyMap<string, T>): [Buffer, T][] {
  let list = digested.get(tokens) as [Buffer, T][] | undefined;
  if (!list) digested.set(tokens, (list = [...tokens].map(([token, value]) => [digest(token), value])));
  return list;
}

/** The cluster an ingest token belongs to. */
export const clusterOfToken = (tokens: ReadonlyMap<string, string>, presented: string | undefined): string | undefined => valueOfToken(tokens, presented);

/** The pipelines a CI token may announce, or undefined when it is no CI token. */
export const pipelinesOfCiToken = (tokens: ReadonlyMap<string, readonly string[]>, presented: string | undefined): readonly string[] | undefined => valueOfToken(tokens, presented);
