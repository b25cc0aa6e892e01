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

/** The list's chunks as JSON, in order: field `${prefix}${i}` holds chunk i. */
export function encodeChunks<T>(items: readonly T[], nameOf: (item: T) => string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < items.length; i++) {
    if (i + 1 < items.length && !boundary(nameOf(items[i] as T))) continue;
    out.push(JSON.stringify(items.slice(start, i + 1)));
    start = i + 1;
  }
  return out;
}

/** The list back from its chunks (fields `${prefix}0`, `${prefix}1`, … until one is missing, at most `max`), or undefined when there is none. */
export function decodeChunks<T>(fields: ReadonlyMap<string, string>, prefix: string, max = Infinity): { items: T[]; jsons: string[] } | undefined {
  const jsons: string[] = [];
  for (let json = fields.get(`${prefix}0`); json !== undefined && jsons.length < max; json = fields.get(`${prefix}${jsons.length}`)) jsons.push(json);
  if (jsons.length === 0) return undefined;
  return { items: jsons.flatMap((json) => JSON.parse(json) as T[]), jsons };
}
