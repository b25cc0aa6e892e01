/**
 * The key layout version, stored under the namespace with the fact partition count. A process
 * whose keys.ts or FACT_PARTITIONS differ from what the data was written with refuses to start:
 * mixing two layouts would leave one half of the data invisible to the other (records, threads),
 * and two partition counts would send one pipeline's facts to two queues worked by two replicas.
 */
import type { Redis } from 'ioredis';
import { KEY_LAYOUT_VERSION, type Keys } from './keys.js';

export interface KeyLayout {
  version: number;
  partitions: number;
}

export class KeyLayoutMismatch extends Error {
  override readonly name = 'KeyLayoutMismatch';
}

function parseLayout(raw: string): KeyLayout | undefined {
  try {
    const value = JSON.parse(raw) as Partial<KeyLayout>;
    return typeof value.version === 'number' && typeof value.partitions === 'number' ? { version: value.version, partitions: value.partitions } : undefined;
  } catch {
    return undefined;
  }
}

/** Records the layout when the namespace has none yet; throws KeyLayoutMismatch, saying what to do, when it has another. */
export async function ensureKeyLayout(redis: Redis, keys: Keys, expected: KeyLayout = { version: KEY_LAYOUT_VERSION, partitions: keys.partitions }): Promise<KeyLayout> {
  const key = keys.layout();
  // No TTL: the layout is what the data under the namespace means, for as long as there is any.
  await redis.set(key, JSON.stringify(expected), 'NX');
  const raw = await redis.get(key);
  const stored = raw === null ? undefined : parseLayout(raw);
  if (stored && stored.version === expected.version && stored.partitions === expected.partitions) return stored;
  const found = stored ? `key layout v${stored.version} with ${stored.partitions} fact partition(s)` : `an unreadable key layout (${JSON.stringify((raw ?? '').slice(0, 60))})`;
  const wanted = `v${expected.version} with ${expected.partitions} (FACT_PARTITIONS=${expected.partitions})`;
  const fix =
    stored && stored.version === expected.version
      ? `Set FACT_PARTITIONS=${stored.partitions} to run with this data, or change the count: stop every Glidepath process, let the fact queues drain, then delete the key "${key}" and start them all with the new count.`
      : `This Glidepath release writes its keys differently; run the release that wrote the data, or start from a new REDIS_PREFIX (the old data stays where it is) or delete the key "${key}" after removing the old data.`;
  throw new KeyLayoutMismatch(`Redis holds ${found} under the namespace "${keys.prefix}", but this process expects ${wanted}. Refusing to start, so two layouts are never mixed. ${fix}`);
}
