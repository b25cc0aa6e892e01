/**
 * A record's notices and events: lists that only grow at the end and let their oldest entries go
 * past a bound, written through pushBounded and never otherwise. Each list's writes are counted
 * beside it (by identity, in a WeakMap), so what is derived from a list is kept until the count
 * moves: the notice keys' set (reduce/notices.ts), asked about each paused or failing target on
 * every fact, and the list's JSON (store/record-codec.ts), sent on every save. A list never
 * written here (a record just read, a copy) counts 0.
 */
const writes = new WeakMap<readonly unknown[], number>();

/** Appends `item` to `list` and lets the oldest entries past `max` go; returns those. */
export function pushBounded<T>(list: T[], item: T, max: number): T[] {
  list.push(item);
  writes.set(list, (writes.get(list) ?? 0) + 1);
  return list.length > max ? list.splice(0, list.length - max) : [];
}

/** How many times `list` was written through pushBounded: while it is unchanged, so is the list. */
export const writesOf = (list: readonly unknown[]): number => writes.get(list) ?? 0;
