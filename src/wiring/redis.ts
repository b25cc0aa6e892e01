/**
 * The Redis connections of one Glidepath process, and why there are exactly these:
 *
 * - `requests` (always): fails fast (one retry, no offline queue), so a Redis outage turns an
 *   HTTP request or a Slack click into a 503 or an honest answer instead of a hung request.
 *   Used by ingest (adding facts), the read and audit APIs, Slack listeners and commands, and
 *   /readyz and /metrics.
 * - `workers` (always; idle on an ingest-only process): retries forever
 *   (`maxRetriesPerRequest: null`, which BullMQ requires of a Worker's connection), so a Redis
 *   restart pauses the work and never loses it. Shared by the reducer's stores, the target
 *   index, the watchdog and Slack queues (the outbox) and the Slack writer's thread state.
 * - One blocking connection per BullMQ Worker (reducer, watchdog, writer): BullMQ duplicates
 *   `workers` for its blocking waits itself; a blocked connection cannot serve anything else.
 *
 * So a process holds at most 2 + (its Workers) connections, whatever its roles.
 */
import type { Redis } from 'ioredis';
import { connectTarget, type RedisTarget } from './redis-target.js';

export interface RedisConnections {
  requests: Redis;
  workers: Redis;
}

/** Resolves when the connection is ready; otherwise fails naming the URL (password hidden) and the last error. */
async function waitReady(redis: Redis, where: string, what: string, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  let lastError: Error | undefined;
  const onError = (err: Error) => {
    lastError = err;
  };
  redis.on('error', onError);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const cause = lastError ? (lastError.message || lastError.name) : `no answer in ${timeoutMs / 1000} s`;
        reject(new Error(`${where} (${what} connection) is not reachable: ${cause}. Check REDIS_URL (or REDIS_CLUSTER_NODES, REDIS_SENTINELS) and that Redis is running.`, { cause: lastError }));
      }, timeoutMs);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    redis.off('error', onError);
  }
}

export async function openRedis(target: RedisTarget, readyTimeoutMs = 10_000): Promise<RedisConnections> {
  const connections: RedisConnections = {
    requests: connectTarget(target, { maxRetriesPerRequest: 1, enableOfflineQueue: target.kind === 'cluster', connectTimeout: 2_000 }),
    workers: connectTarget(target, { maxRetriesPerRequest: null, enableReadyCheck: true }),
  };
  try {
    await Promise.all([waitReady(connections.requests, target.describe, 'requests', readyTimeoutMs), waitReady(connections.workers, target.describe, 'workers', readyTimeoutMs)]);
  } catch (err) {
    void closeRedis(connections, false);
    throw err;
  }
  return connections;
}

/** `graceful`: QUIT after the replies in flight; otherwise drop the sockets at once. */
export async function closeRedis(connections: RedisConnections, graceful = true): Promise<void> {
  for (const redis of [connections.requests, connections.workers]) {
    if (graceful && redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}
