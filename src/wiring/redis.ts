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
import { StartupError } from '../config/errors.js';
import { connectTarget, isRedisAuthRefusal, redisConnectProblem, type RedisTarget } from './redis-target.js';

/** Redis refused us or could not be reached at start-up; the message says which and the fix. */
export class RedisStartupError extends StartupError {
  override readonly name = 'RedisStartupError';
}

export interface RedisConnections {
  requests: Redis;
  workers: Redis;
}

/**
 * Resolves when the connection is ready; otherwise fails naming the target (password hidden) and
 * what went wrong: credentials refused at once (no retry fixes them), unreachable after the timeout.
 */
async function waitReady(redis: Redis, target: RedisTarget, what: string, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  let lastError: Error | undefined;
  let onError: (err: Error) => void = () => undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => reject(new RedisStartupError(`${redisConnectProblem(target, err).text} (${what} connection)`, { cause: err }));
      const timer = setTimeout(() => failed(lastError ?? new Error(`no answer in ${timeoutMs / 1000} s`)), timeoutMs);
      onError = (err: Error) => {
        lastError = err;
        if (!isRedisAuthRefusal(err)) return;
        clearTimeout(timer);
        failed(err);
      };
      redis.on('error', onError);
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
    await Promise.all([waitReady(connections.requests, target, 'requests', readyTimeoutMs), waitReady(connections.workers, target, 'workers', readyTimeoutMs)]);
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
