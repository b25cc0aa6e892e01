/** Starts a real Glidepath (the composition root) on the shared Redis under a key prefix of its own, and cleans up only that prefix. */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { parseEnv, type Env } from '../../src/config/env.js';
import type { ConfigFile } from '../../src/config/file.js';
import { startGlidepath, type Glidepath, type GlidepathOptions } from '../../src/glidepath.js';
import { createLogger } from '../../src/obs/logger.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { deleteKeysWithPrefix } from '../../src/store/redis.js';

export type { Glidepath } from '../../src/glidepath.js';

export const INGEST_TOKEN = 'prod-token-0123456789abcdef';
export const DEV_TOKEN = 'dev-token-0123456789abcdef';
export const READ_TOKEN = 'read-token-0123456789abcdef';
/** CI's token, bound to the checkout pipeline. */
export const CI_TOKEN = 'ci-checkout-token-0123456789abcdef';

export function uniquePrefix(): string {
  return `{gp-test-${randomBytes(6).toString('hex')}}`;
}

export function testEnv(overrides: Record<string, string> = {}): Env {
  return parseEnv({
    PORT: '0',
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_PREFIX: uniquePrefix(),
    INGEST_TOKENS: `prod=${INGEST_TOKEN},dev=${DEV_TOKEN}`,
    CI_TOKENS: `checkout=${CI_TOKEN}`,
    API_READ_TOKEN: READ_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  });
}

export type TestGlidepathOptions = Partial<Omit<GlidepathOptions, 'env' | 'config'>> & {
  /** false: ingest only (no reducer, watchdog or writer), as an ingest replica. */
  workers?: boolean;
};

export async function startTestGlidepath(config: ConfigFile, env: Env = testEnv(), extra: TestGlidepathOptions = {}): Promise<Glidepath> {
  const { workers, ...options } = extra;
  return startGlidepath({
    env,
    config,
    host: '127.0.0.1',
    logger: createLogger(env.LOG_LEVEL),
    metrics: createMetrics({ defaultMetrics: false }),
    ...(workers === false ? { roles: ['ingest'] as const } : {}),
    ...options,
  });
}

/** Deletes every key under the prefix (and nothing else) on the given Redis. */
export async function dropPrefix(prefix: string, url = 'redis://127.0.0.1:6379'): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await deleteKeysWithPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

export async function postJson(url: string, body: unknown, token = INGEST_TOKEN, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, headers: res.headers };
}

export async function getJson(url: string, token = READ_TOKEN) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, json: (await res.json()) as any };
}
