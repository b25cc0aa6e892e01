/**
 * Long ordered lists of a release record (a step stage's target keys, an ApplicationSet's
 * members: thousands each) as several hash fields, so a save sends the parts that changed
 * instead of the whole list. A chunk ends after an entry whose name hashes to a boundary (about
 * one in CHUNK), so adding or removing an entry changes the one chunk that holds it (and the
 * numbering of the chunks after it only when the entry was a boundary); appending changes the last.
 */
const CHUNK = 16;

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

/** The list's chunks as JSON, in order: field `${prefix}${i}` holds chunk i. */
export function encodeChunks<T>(items: readonly T[], nameOf: (item: T) => string): string[] {
  return encodeChunksAfter(items, nameOf, undefined).jsons;
}

/**
 * The list's chunks, exactly as encodeChunks makes them, from the chunks of an earlier version of
 * it: a chunk whose entries are all the same (`same`: by identity unless told) at the same places
 * keeps its JSON, and the chunks before the first entry that differs are not looked at again
 * (appending to a list of thousands encodes its last chunk; a status write that moves 50 of an
 * ApplicationSet's children encodes the chunks that hold them). `before` itself when nothing differs.
 */
export function encodeChunksAfter<T>(items: readonly T[], nameOf: (item: T) => string, before: Chunked<T> | undefined, same: (a: T, b: T) => boolean = Object.is): Chunked<T> {
  let kept = 0;
  if (before) {
    const common = Math.min(items.length, before.items.length);
    let first = 0;
    while (first < common && same(items[first] as T, before.items[first] as T)) first++;
    if (first === items.length && items.length === before.items.length) return before;
    // Every chunk but the last ends at a boundary, so one that ends by the first difference is unchanged.
    while (kept < before.jsons.length - 1 && (before.ends[kept] as number) <= first) kept++;
  }
  const out: Chunked<T> = { items, jsons: before ? before.jsons.slice(0, kept) : [], ends: before ? before.ends.slice(0, kept) : [] };
  // Where each earlier chunk started, to find one that the same entries make again further on.
  const earlier = new Map<number, number>();
  if (before) for (let c = kept; c < before.jsons.length; c++) earlier.set(c === 0 ? 0 : (before.ends[c - 1] as number), c);
  let start = kept > 0 ? (out.ends[kept - 1] as number) : 0;
  for (let i = start; i < items.length; i++) {
    if (i + 1 < items.length && !boundary(nameOf(items[i] as T))) continue;
    out.jsons.push(unchangedChunk(items, start, i + 1, before, earlier.get(start), same) ?? JSON.stringify(items.slice(start, i + 1)));
    out.ends.push(i + 1);
    start = i + 1;
  }
  return out;
}

/** The JSON of earlier chunk `c` when it held exactly items[start, end). */
function unchangedChunk<T>(items: readonly T[], start: number, end: number, before: Chunked<T> | undefined, c: number | undefined, same: (a: T, b: T) => boolean): string | undefined {
  if (!before || c === undefined || before.ends[c] !== end) return undefined;
  for (let i = start; i < end; i++) if (!same(items[i] as T, before.items[i] as T)) return undefined;
  return before.jsons[c];
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
