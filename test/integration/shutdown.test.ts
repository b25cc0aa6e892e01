/**
 * `npm start` as an orchestrator runs it: SIGTERM makes /readyz fail first, then the process
 * stops accepting, finishes the jobs it holds, closes its queues and Redis, and exits 0.
 * And a Redis it cannot reach at start-up is named, with the cause.
 */
import { redisClient } from '../helpers/slack-harness.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../sandbox/ensure-redis.js';
import { FACTS_QUEUE } from '../../src/facts/fact-queue.js';
import { dropPrefix, INGEST_TOKEN, postJson, startTestGlidepath, testEnv, uniquePrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

function startMain(env: Record<string, string>): { child: ChildProcess; output: () => string; url: Promise<string>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const url = new Promise<string>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const listening = out.split('\n').find((l) => l.includes('"glidepath listening"'));
      if (listening) resolve(`http://127.0.0.1:${(JSON.parse(listening) as { port: number }).port}`);
    });
  });
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, url, exit };
}

describe('graceful shutdown', () => {
  it('on SIGTERM fails readiness first, finishes the jobs in hand and exits 0', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-shutdown-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'config.yaml'), stringify(testConfig()));
    const prefix = uniquePrefix();
    cleanup.push(() => dropPrefix(prefix));
    const main = startMain({
      GLIDEPATH_CONFIG: join(dir, 'config.yaml'),
      PORT: '0',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PREFIX: prefix,
      INGEST_TOKENS: `prod=${INGEST_TOKEN}`,
      SLACK_BOT_TOKEN: '',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_MS: '1500',
    });
    const url = await main.url;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const accepted = 40;
    for (let i = 0; i < accepted; i += 1) {
      const body = rolloutBody({ name: `checkout-${i}`, uid: `uid-${i}`, generation: 5, rv: 100 + i, releaseId: 'rel-5', podHash: '7c9d6b5f48', stableRS: '6d9b8c7f5a', step: 1, phase: 'Paused' });
      expect((await postJson(`${url}/v1/facts/rollouts`, body)).status).toBe(202);
    }
    main.child.kill('SIGTERM');
    // Readiness fails while the process still answers, so a load balancer moves traffic away first.
    const draining = await waitFor(async () => {
      const res = await fetch(`${url}/readyz`);
      return res.status === 503 ? ((await res.json()) as { status: string }) : undefined;
    }, 'readiness to fail');
    expect(draining.status).toBe('shutting down');
    expect(await main.exit, main.output()).toBe(0);
    expect(main.output()).toContain('"glidepath stopped"');
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();

    // Every accepted fact is either reduced or still waiting for the next worker; none is left held by the dead process.
    const redis = redisClient();
    const facts = new Queue(FACTS_QUEUE, { connection: redis, prefix });
    try {
      const counts = await facts.getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed');
      expect(counts.active).toBe(0);
      expect(counts.failed).toBe(0);
      expect(Object.values(counts).reduce((n, c) => n + c, 0)).toBe(accepted);
    } finally {
      await facts.close();
      redis.disconnect();
    }
  });

  it('at start-up names the Redis it cannot reach (password hidden) and why', async () => {
    const port = await freePort();
    const env = testEnv({ REDIS_URL: `redis://:s3cret-pw@127.0.0.1:${port}/0` });
    const failure = await startTestGlidepath(testConfig(), env, { tuning: { redisReadyTimeoutMs: 1_000 } }).then(
      () => new Error('started without Redis'),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toContain(`Redis at redis://:***@127.0.0.1:${port}/0`);
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain('is unreachable (');
    expect(failure.message).toContain('check REDIS_URL');
    expect(failure.message).not.toContain('s3cret-pw');
  });
});
