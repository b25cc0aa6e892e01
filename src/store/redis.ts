import { Redis, type RedisOptions } from 'ioredis';

/**
 * Connections for BullMQ workers must retry forever (`maxRetriesPerRequest: null`); connections
 * that answer HTTP requests must fail fast so a Redis outage becomes a 503, not a hung request.
 */
export function connectRedis(url: string, role: 'worker' | 'request', extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, ...extra };
  const redis = new Redis(url, options);
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

/** Deletes every key under a prefix (and nothing else): a test's, a benchmark's or a sandbox's own keys. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
