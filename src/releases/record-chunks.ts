/**
 * Long ordered lists of a release record (a step stage's target keys, an ApplicationSet's
 * members: thousands each) as several hash fields, so a save sends the parts that changed
 * instead of the whole list. A chunk ends after an entry whose name hashes to a boundary (about
 * one in CHUNK), so adding or removing an entry changes the one chunk that holds it (and the
 * numbering of the chunks after it only when the entry was a boundary); appending changes the last.
 */
const CHUNK = 64;

function boundary(name: string): boolean {
  // FNV-1a: stable across processes and versions, unlike anything keyed by memory.
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h >>> 0) % CHUNK === 0;
}

/** A list as chunks: the chunks' JSON in order, and the index each chunk ends at (exclusive). */
export interface Chunked<T> {
  items: readonly T[];
  jsons: string[];
  ends: number[];
}

/** Chunks of items[start…], appended to `out`. */
function chunkFrom<T>(items: readonly T[], nameOf: (item: T) => string, start: number, out: Chunked<T>): void {
  for (let i = start; i < items.length; i++) {
    if (i + 1 < items.length && !boundary(nameOf(items[i] as T))) continue;
    out.jsons.push(JSON.stringify(items.slice(start, i + 1)));
    out.ends.push(i + 1);
    start = i + 1;
  }
}

/** The list's chunks as JSON, in order: field `${prefix}${i}` holds chunk i. */
export function encodeChunks<T>(items: readonly T[], nameOf: (item: T) => string): string[] {
  return encodeChunksAfter(items, nameOf, undefined).jsons;
}

/**
 * The list's chunks, as encodeChunks makes them, from the chunks of an earlier version of it:
 * the chunks before the first entry that differs (by identity) are kept, and only the rest is
 * encoded again (appending to a list of thousands encodes its last chunk). `before` itself when
 * nothing differs.
 */
export function encodeChunksAfter<T>(items: readonly T[], nameOf: (item: T) => string, before: Chunked<T> | undefined): Chunked<T> {
  let kept = 0;
  if (before) {
    const common = Math.min(items.length, before.items.length);
    let first = 0;
    while (first < common && items[first] === before.items[first]) first++;
    if (first === items.length && items.length === before.items.length) return before;
    // Every chunk but the last ends at a boundary, so one that ends by the first difference is unchanged.
    while (kept < before.jsons.length - 1 && (before.ends[kept] as number) <= first) kept++;
  }
  const out: Chunked<T> = { items, jsons: before ? before.jsons.slice(0, kept) : [], ends: before ? before.ends.slice(0, kept) : [] };
  chunkFrom(items, nameOf, kept > 0 ? (out.ends[kept - 1] as number) : 0, out);
  return out;
}

/** The list back from its chunks (fields `${prefix}0`, `${prefix}1`, … until one is missing, at most `max`), or undefined when there is none. */
export function decodeChunks<T>(fields: ReadonlyMap<string, string>, prefix: string, max = Infinity): Chunked<T> | undefined {
  const jsons: string[] = [];
  for (let json = fields.get(`${prefix}0`); json !== undefined && jsons.length < max; json = fields.get(`${prefix}${jsons.length}`)) jsons.push(json);
  if (jsons.length === 0) return undefined;
  const items: T[] = [];
  const ends: number[] = [];
  for (const json of jsons) {
    for (const item of JSON.parse(json) as T[]) items.push(item);
    ends.push(items.length);
  }
  return { items, jsons, ends };
}
