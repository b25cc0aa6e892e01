/**
 * Where Redis is and how to reach it, from the environment: one node (REDIS_URL, rediss:// for
 * TLS), a Sentinel-managed master (REDIS_SENTINELS + REDIS_SENTINEL_MASTER) or a Redis Cluster
 * (REDIS_CLUSTER_NODES, seed nodes). ACL user and password, a CA file and a client certificate
 * apply to all three. Files are read once, here, at start-up (a missing file is named).
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Env } from '../config/env.js';
import { coalesceWrites } from '../store/coalesced-writes.js';
import { ConfigError } from '../config/errors.js';

export type RedisTarget =
  | { kind: 'node'; url: string; options: RedisOptions; describe: string }
  | { kind: 'sentinel'; options: RedisOptions; describe: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[]; options: RedisOptions; describe: string };

type RedisEnv = Pick<
  Env,
  | 'REDIS_URL'
  | 'REDIS_CLUSTER_NODES'
  | 'REDIS_SENTINELS'
  | 'REDIS_SENTINEL_MASTER'
  | 'REDIS_SENTINEL_PASSWORD'
  | 'REDIS_USERNAME'
  | 'REDIS_PASSWORD'
  | 'REDIS_TLS'
  | 'REDIS_TLS_CA_FILE'
  | 'REDIS_TLS_CERT_FILE'
  | 'REDIS_TLS_KEY_FILE'
>;

/** The URL as it may be shown in a log or an error: the password replaced by `***`. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable REDIS_URL)';
  }
}

function readPem(variable: string, path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError('environment', [`${variable}: cannot read ${path}: ${(err as Error).message}`]);
  }
}

export function redisTargetFromEnv(env: Partial<RedisEnv> & { REDIS_URL: string }): RedisTarget {
  const url = new URL(env.REDIS_URL);
  const tlsWanted = env.REDIS_TLS === true || url.protocol === 'rediss:' || env.REDIS_TLS_CA_FILE !== undefined;
  const ca = readPem('REDIS_TLS_CA_FILE', env.REDIS_TLS_CA_FILE);
  const cert = readPem('REDIS_TLS_CERT_FILE', env.REDIS_TLS_CERT_FILE);
  const key = readPem('REDIS_TLS_KEY_FILE', env.REDIS_TLS_KEY_FILE);
  const options: RedisOptions = {};
  const username = env.REDIS_USERNAME ?? (url.username ? decodeURIComponent(url.username) : undefined);
  const password = env.REDIS_PASSWORD ?? (url.password ? decodeURIComponent(url.password) : undefined);
  if (username) options.username = username;
  if (password) options.password = password;
  if (tlsWanted) options.tls = { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
  const who = username ? `${username}@` : '';
  if (env.REDIS_CLUSTER_NODES) {
    const nodes = env.REDIS_CLUSTER_NODES;
    return { kind: 'cluster', nodes, options, describe: `Redis Cluster ${who}${nodes.map((n) => `${n.host}:${n.port}`).join(',')}${tlsWanted ? ' (TLS)' : ''}` };
  }
  if (env.REDIS_SENTINELS) {
    const sentinelOptions: RedisOptions = {
      ...options,
      sentinels: env.REDIS_SENTINELS,
      name: env.REDIS_SENTINEL_MASTER as string,
      ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
      ...(tlsWanted ? { enableTLSForSentinelMode: true, sentinelTLS: options.tls ?? {} } : {}),
    };
    const db = Number(url.pathname.slice(1) || 0);
    if (db) sentinelOptions.db = db;
    return { kind: 'sentinel', options: sentinelOptions, describe: `master "${env.REDIS_SENTINEL_MASTER}" of Sentinels ${env.REDIS_SENTINELS.map((n) => `${n.host}:${n.port}`).join(',')}` };
  }
  return { kind: 'node', url: env.REDIS_URL, options, describe: `Redis at ${redactRedisUrl(env.REDIS_URL)}` };
}

/**
 * A connection to the target. A Cluster client is handed out as the `Redis` type the stores are
 * written against: every command they send names keys of one slot (keys.ts tags them), which is
 * what ioredis' Cluster needs to route it; BullMQ takes a Cluster connection as it is.
 */
export function connectTarget(target: RedisTarget, extra: RedisOptions): Redis {
  let redis: Redis;
  if (target.kind === 'cluster') {
    const clusterOptions: ClusterOptions = {
      redisOptions: { ...target.options, ...extra },
      // Commands wait for the slot map instead of failing while the client learns it.
      enableOfflineQueue: extra.enableOfflineQueue ?? true,
      ...(extra.maxRetriesPerRequest === null ? {} : { maxRedirections: 16 }),
      ...(target.options.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    };
    redis = new Cluster(target.nodes, clusterOptions) as unknown as Redis;
  } else {
    redis = coalesceWrites(target.kind === 'sentinel' ? new Redis({ ...target.options, ...extra }) : new Redis(target.url, { ...target.options, ...extra }));
  }
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

/** Redis answered and said no to our credentials: no retry will fix that. */
export function isRedisAuthRefusal(err: Error): boolean {
  return /NOAUTH|WRONGPASS|invalid password|invalid username|NOPERM/i.test(err.message || err.name);
}

/**
 * A failed connection in a person's words, for start-up and `glidepath check` alike: Redis
 * refusing the credentials (NOAUTH, WRONGPASS) is not Redis being down (refused, DNS, timeout).
 */
export function redisConnectProblem(target: Pick<RedisTarget, 'describe'>, err: Error): { kind: 'rejected' | 'unreachable'; text: string } {
  const detail = (err.message || err.name).slice(0, 120);
  if (isRedisAuthRefusal(err)) {
    return { kind: 'rejected', text: `${target.describe} rejected the credentials (${detail}): check REDIS_USERNAME / REDIS_PASSWORD (or the user and password in REDIS_URL)` };
  }
  return { kind: 'unreachable', text: `${target.describe} is unreachable (${detail}): check REDIS_URL (or REDIS_CLUSTER_NODES, REDIS_SENTINELS) and that Redis is running and reachable from here` };
}
