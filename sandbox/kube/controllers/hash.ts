/** Pod-template hashes shaped like Kubernetes' (FNV-32a, then the "safe" alphabet without vowels). */
import { canonical } from '../patch.js';

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function safeHash(value: unknown): string {
  return [...String(fnv32a(JSON.stringify(canonical(value))))].map((d) => SAFE[Number(d) % SAFE.length]).join('');
}
