/**
 * `glidepath check`, Redis: reachable with the credentials of the environment (the same target
 * start-up builds, src/wiring/redis-target.ts), a version BullMQ accepts, the eviction policy
 * BullMQ requires, and whether queued facts survive a restart. Read-only: one INFO, no keys.
 */
import type { Redis } from 'ioredis';
import type { Env } from '../config/env.js';
import { ConfigError } from '../config/errors.js';
import { connectTarget, redisConnectProblem, redisTargetFromEnv, type RedisTarget } from '../wiring/redis-target.js';
import { fail, ok, warn, type CheckLine } from './check-line.js';

/** BullMQ refuses older servers (RedisConnection.minimumVersion) and recommends 6.2 (recommendedMinimumVersion). */
export const BULLMQ_MINIMUM_REDIS = '5.0.0';
export const BULLMQ_RECOMMENDED_REDIS = '6.2.0';

const SUBJECT = 'redis';

function older(version: string, than: string): boolean {
  const a = version.split('.').map(Number);
  const b = than.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}

/** `INFO`'s `key:value` lines. */
export function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) out.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return out;
}

/** Ready, or the last error: one attempt (no reconnects), bounded by the connect timeout. */
function ready(redis: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let last: Error | undefined;
    const timer = setTimeout(() => reject(last ?? new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    redis.on('error', (err: Error) => (last = err));
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
    redis.once('end', () => {
      clearTimeout(timer);
      reject(last ?? new Error('the connection closed'));
    });
  });
}

function connectFailure(target: RedisTarget, err: Error): CheckLine {
  return fail(SUBJECT, redisConnectProblem(target, err).text);
}

export async function checkRedis(env: Env, timeoutMs: number): Promise<CheckLine[]> {
  let target: RedisTarget;
  try {
    target = redisTargetFromEnv(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => fail(SUBJECT, p));
    throw err;
  }
  // No retries and no offline queue: a check says what is wrong now instead of waiting it out.
  const redis = connectTarget(target, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs, commandTimeout: timeoutMs, retryStrategy: () => null });
  try {
    try {
      await ready(redis, timeoutMs);
    } catch (err) {
      return [connectFailure(target, err as Error)];
    }
    let info: Map<string, string>;
    try {
      info = parseInfo(await redis.info());
    } catch (err) {
      return [connectFailure(target, err as Error)];
    }
    // On a Redis Cluster this is one node's answer; the nodes of one cluster are configured alike.
    const version = info.get('redis_version') ?? 'unknown';
    const lines: CheckLine[] = [];
    if (version === 'unknown') lines.push(warn(SUBJECT, `${target.describe} answers but does not say its version (redis_version); BullMQ needs Redis ${BULLMQ_MINIMUM_REDIS} or newer (${BULLMQ_RECOMMENDED_REDIS}+ recommended)`));
    else if (older(version, BULLMQ_MINIMUM_REDIS)) lines.push(fail(SUBJECT, `${target.describe} is Redis ${version}; BullMQ refuses anything older than ${BULLMQ_MINIMUM_REDIS}: upgrade Redis (${BULLMQ_RECOMMENDED_REDIS}+ recommended)`));
    else if (older(version, BULLMQ_RECOMMENDED_REDIS)) lines.push(warn(SUBJECT, `${target.describe} is Redis ${version}; BullMQ works but recommends ${BULLMQ_RECOMMENDED_REDIS} or newer: plan an upgrade`));
    else lines.push(ok(SUBJECT, `${target.describe} answers (Redis ${version})`));

    const policy = info.get('maxmemory_policy');
    if (policy === 'noeviction') lines.push(ok(SUBJECT, 'maxmemory-policy is noeviction'));
    else if (policy === undefined) lines.push(warn(SUBJECT, 'INFO does not say maxmemory_policy; make sure it is noeviction (BullMQ requires it)'));
    else {
      lines.push(fail(SUBJECT, `maxmemory-policy is ${policy}; BullMQ requires noeviction (under memory pressure Redis would evict queued jobs and their locks, and facts would be lost): set "maxmemory-policy noeviction" in redis.conf, the chart's values or the managed service's parameter group`));
    }

    // A warning, not a failure: with AOF off, RDB snapshots or a replica may be the chosen
    // durability, and Glidepath runs; only what was queued since the last snapshot is at stake.
    const aof = info.get('aof_enabled');
    if (aof === '1') lines.push(ok(SUBJECT, 'append-only file (AOF) is on: queued facts survive a Redis restart'));
    else if (aof === '0') lines.push(warn(SUBJECT, 'append-only file (AOF) is off: a Redis restart loses the facts queued since the last snapshot; set "appendonly yes" (appendfsync everysec) unless snapshots or a replica are your durability'));
    else lines.push(warn(SUBJECT, 'INFO does not say aof_enabled: cannot tell whether queued facts survive a Redis restart'));
    return lines;
  } finally {
    redis.disconnect();
  }
}
