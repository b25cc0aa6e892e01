/** Faults: Redis down and back, concurrent workers on one release. */
import { afterAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { OwnRedis } from '../helpers/redis-server.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

describe('Redis unreachable', () => {
  let redis: OwnRedis;
  let app: Glidepath;
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('answers 503 (so the sender retries), records nothing, and recovers when Redis is back', async () => {
    redis = await OwnRedis.start();
    app = await startTestGlidepath(testConfig(), testEnv({ REDIS_URL: redis.url }));
    const body = rolloutBody({ generation: 5, rv: 50, releaseId: 'rel-outage', podHash: 'p1', stableRS: 'p1', phase: 'Healthy' });

    await redis.stop();
    const down = await postJson(`${app.url}/v1/facts/rollouts`, body);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.json.message).toMatch(/nothing was recorded, retry later/);
    expect((await fetch(`${app.url}/readyz`)).status).toBe(503);

    await redis.start(); // a fresh, empty Redis on the same port
    await waitFor(async () => (await fetch(`${app.url}/readyz`)).status === 200 || undefined, 'ready again', 40_000);
    // As the notifications engine does: retry a 503 a few times.
    const up = await waitFor(async () => {
      const res = await postJson(`${app.url}/v1/facts/rollouts`, body);
      return res.status === 503 ? undefined : res;
    }, 'accepted after recovery', 40_000);
    expect(up.status).toBe(202);
    const record = await waitFor(async () => (await app.store.get('checkout', 'rel-outage')) ?? undefined, 'record after recovery', 40_000);
    expect(record.counters.facts).toBe(1);
  }, 90_000);
});

describe('two workers on one release', () => {
  const env = testEnv({ REDUCER_CONCURRENCY: '8' });
  const apps: Glidepath[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('reducing facts of the same release concurrently loses no update', async () => {
    apps.push(await startTestGlidepath(testConfig(), env), await startTestGlidepath(testConfig(), env));
    const targets = 40;
    const bodies = Array.from({ length: targets }, (_, i) =>
      rolloutBody({ name: `svc-${i}`, uid: `uid-${i}`, generation: 3, rv: 1000 + i, releaseId: 'rel-race', image: `registry.example.com/shop/svc-${i}:7`, podHash: 'q1', stableRS: 'q1', phase: 'Healthy' }),
    );
    // Half the facts through each instance, all at once.
    const results = await Promise.all(bodies.map((b, i) => postJson(`${apps[i % 2]!.url}/v1/facts/rollouts`, b)));
    expect(results.every((r) => r.status === 202)).toBe(true);
    const record = await waitFor(async () => {
      const r = await apps[0]!.store.get('checkout', 'rel-race');
      return r && r.counters.facts === targets ? r : undefined;
    }, 'all facts reduced');
    const prod = record.stages.find((s) => s.name === 'prod')!;
    expect(Object.keys(prod.targets)).toHaveLength(targets);
    expect(record.images).toHaveLength(targets);
  });
});
