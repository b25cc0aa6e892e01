/**
 * Strings from the outside may be any sequence of UTF-16 units, including lone surrogates
 * (JSON allows `"\ud800"`). Such a string cannot be encoded as UTF-8: Redis keys, Slack and
 * logs would all mangle or refuse it. These helpers find them, and cut strings without
 * making them (slicing between the two halves of an emoji leaves a lone surrogate).
 */
import { z } from 'zod';

/** In a `u` regex a pair is one code point, so this only matches a surrogate that has no partner. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export function isWellFormed(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** The first `max` code points of `value` (never half a pair). */
export function cutCodePoints(value: string, max: number): string {
  if (value.length <= max) return value;
  let out = '';
  let count = 0;
  for (const cp of value) {
    if (count++ === max) break;
    out += cp;
  }
  return out;
}

/** What a cut string ends with: one UTF-16 unit, so a cut result is never longer than its limit. */
export const ELLIPSIS = '…';

/**
 * `value` when it has at most `max` UTF-16 units; else its longest prefix that leaves room for
 * the ellipsis and does not end between the two halves of a pair, then `…`. The limits of the
 * schemas are in UTF-16 units (zod's `.max`), so the cut is too.
 *
 * The result is a fresh copy: a slice of a 10 MiB string would keep the whole of it alive (V8
 * keeps a sliced string's parent), and the point of cutting is that the rest is let go.
 */
export function cutWithEllipsis(value: string, max: number): string {
  if (value.length <= max) return value;
  if (max < 1) return '';
  let end = max - 1;
  const last = value.charCodeAt(end - 1);
  // A high surrogate whose low half would be cut off: leave the whole pair out.
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return Buffer.from(value.slice(0, end) + ELLIPSIS, 'utf16le').toString('utf16le');
}

/**
 * Whether some string (value or object key) in a parsed JSON value is not well-formed Unicode.
 * Keeps only a stack of values: run on every ingested fact, so it allocates next to nothing
 * (building each node's path, as illFormedPath does, was a third of what ingest allocated per fact).
 */
export function hasIllFormed(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (!isWellFormed(value)) return true;
    } else if (Array.isArray(value)) {
      for (const v of value) stack.push(v);
    } else if (value !== null && typeof value === 'object') {
      for (const k of Object.keys(value)) {
        if (!isWellFormed(k)) return true;
        stack.push((value as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/**
 * The path of the first string (value or object key) in a parsed JSON value that is not
 * well-formed Unicode, or undefined when every string is. Iterative, so a deeply nested body
 * cannot overflow the stack.
 */
export function illFormedPath(root: unknown): (string | number)[] | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: (string | number)[] };
    if (typeof value === 'string') {
      if (!isWellFormed(value)) return path;
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: [...path, i] }));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (!isWellFormed(k)) return [...path, k];
        stack.push({ value: v, path: [...path, k] });
      }
    }
  }
  return undefined;
}

/**
 * `schema`, applied only to bodies whose every string is well-formed: the one check at the
 * boundary, so nothing downstream (keys, Slack, logs) ever meets a lone surrogate.
 */
export function wellFormed<S extends z.ZodType>(schema: S): z.ZodPipe<z.ZodUnknown, S> {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const path = hasIllFormed(value) ? illFormedPath(value) : undefined;
      if (path) ctx.addIssue({ code: 'custom', path, message: 'is not well-formed Unicode (a lone UTF-16 surrogate)' });
    })
    .pipe(schema);
}
