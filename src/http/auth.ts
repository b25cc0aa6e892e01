import { createHash, timingSafeEqual } from 'node:crypto';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison that does not leak the length either. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Finds the cluster a token belongs to. Every token is compared, so the time taken does not
 * tell which (or whether any) token was close.
 */
export function clusterOfToken(tokens: ReadonlyMap<string, string>, presented: string | undefined): string | undefined {
  if (presented === undefined) return undefined;
  let found: string | undefined;
  for (const [token, cluster] of tokens) {
    if (safeEqual(token, presented)) found = cluster;
  }
  return found;
}

/** The pipelines a CI token may announce, or undefined when it is no CI token. Constant-time as above. */
export function pipelinesOfCiToken(tokens: ReadonlyMap<string, readonly string[]>, presented: string | undefined): readonly string[] | undefined {
  if (presented === undefined) return undefined;
  let found: readonly string[] | undefined;
  for (const [token, pipelines] of tokens) {
    if (safeEqual(token, presented)) found = pipelines;
  }
  return found;
}
