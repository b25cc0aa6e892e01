/** List pagination: the opaque `continue` token names the resourceVersion of the first page and the last key served. */
import { badRequest } from './errors.js';

export interface ContinueToken {
  rv: number;
  start: string;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

export function decodeContinue(raw: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.start === 'string') return t;
  } catch {
    // fall through
  }
  throw badRequest('invalid continue token');
}
