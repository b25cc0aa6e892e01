/** A reducer process killed with SIGKILL in the middle of a job: the job is retried, and counted once. */
import type { ChildProcess } from 'node:child_process';
import { forkGlidepathChild } from '../helpers/child-glidepath.js';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { fixture } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = fileURLToPath(new URL('../fixtures/reducer-child.ts', import.meta.url));

const startChild = async (env: Record<string, string>): Promise<ChildProcess> => (await forkGlidepathChild(CHILD, env, { stdout: 'ignore' })).process;

describe('worker killed mid-job', () => {
  const env = testEnv({ JOB_LOCK_MS: '1000' });
  // The killed worker's fact partition lease expires as fast as its job lock.
  const childEnv = {
    PORT: '0', REDIS_URL: env.REDIS_URL, REDIS_PREFIX: env.REDIS_PREFIX, LOG_LEVEL: 'silent', JOB_LOCK_MS: '1000', PARTITION_LEASE_MS: '1000',
    INGEST_TOKENS: 'prod=prod-token-0123456789abcdef',
  };
  const redis = new Redis(env.REDIS_URL);
  let ingest: Glidepath;
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await ingest?.close();
    await dropPrefix(env.REDIS_PREFIX);
    redis.disconnect();
  });

  it('retries the job after the lock expires; the record counts the fact once and the reply is sent once', async () => {
    ingest = await startTestGlidepath(testConfig(), env, { workers: false });
    const first = await startChild({ ...childEnv, HANG: '1' });
    children.push(first);

    expect((await postJson(`${ingest.url}/v1/facts/rollouts`, fixture('paused'))).status).toBe(202);
    await waitFor(async () => (await redis.llen(`${env.REDIS_PREFIX}:test:entered`)) > 0 || undefined, 'first worker inside the job');
    const exited = new Promise((r) => first.once('exit', r));
    first.kill('SIGKILL');
    await exited;

    // The record was saved before the kill; its outbox still holds the undelivered effects.
    const saved = await ingest.store.load('checkout', 'rel-4');
    expect(saved?.record.counters.facts).toBe(1);
    expect(saved?.outbox.map((e) => e.type)).toContain('thread.reply');

    children.push(await startChild({ ...childEnv, HANG: '0' }));
    const delivered = await waitFor(async () => {
      const ids = await redis.lrange(`${env.REDIS_PREFIX}:test:delivered`, 0, -1);
      return ids.length > 0 ? ids : undefined;
    }, 'the retried job to deliver', 30_000);
    await waitFor(async () => ((await ingest.store.load('checkout', 'rel-4'))?.outbox.length === 0) || undefined, 'outbox cleared');

    const after = await ingest.store.load('checkout', 'rel-4');
    expect(after?.record.counters).toMatchObject({ facts: 1, duplicate: 1 }); // the retry saw its own fact again
    expect(delivered.filter((id) => id.includes(':paused:'))).toHaveLength(1);
    expect(after?.record.stages.find((s) => s.name === 'prod')?.status).toBe('Paused');
  });
});
