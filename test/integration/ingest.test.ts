/** Ingest through the real server, queue, reducer and Redis. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { MAX_EXPIRY_SLACK_MS } from '../../src/store/expiry-refresh.js';
import { testConfig } from '../helpers/pipeline.js';
import { CI_TOKEN, dropPrefix, getJson, INGEST_TOKEN, postJson, startTestGlidepath, testEnv, DEV_TOKEN } from '../helpers/glidepath.js';
import { fixture, rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

describe('ingest', () => {
  let app: Glidepath;
  const env = testEnv();

  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env);
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('a Rollouts fact is accepted (202) and its release becomes readable through the API', async () => {
    const res = await postJson(`${app.url}/v1/facts/rollouts`, fixture('paused'));
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: true });
    const record = await waitFor(async () => {
      const r = await getJson(`${app.url}/v1/releases/checkout/rel-4`);
      return r.status === 200 ? r.json : undefined;
    }, 'release rel-4');
    expect(record.status).toBe('Paused');
    const prod = record.stages.find((s: any) => s.name === 'prod');
    expect(prod.status).toBe('Paused');
    expect(Object.keys(prod.targets)).toEqual(['prod/shop/checkout']);
    expect(record.outbox).toBeUndefined();
    const list = await getJson(`${app.url}/v1/releases?pipeline=checkout`);
    expect(list.json.releases.map((r: any) => r.releaseId)).toContain('rel-4');
  });

  it('the same notification delivered three times is one job and one fact', async () => {
    const body = rolloutBody({ generation: 30, rv: 3000, releaseId: 'rel-dup', podHash: 'd1', stableRS: 'd1', phase: 'Healthy' });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await postJson(`${app.url}/v1/facts/rollouts`, body)).json.id);
    expect(new Set(ids).size).toBe(1);
    const record = await waitFor(async () => (await app.store.get('checkout', 'rel-dup')) ?? undefined, 'rel-dup');
    await waitFor(async () => (await app.facts.queue.getJobCounts('waiting', 'active')).waiting === 0 || undefined, 'queue drained');
    expect((await app.store.get('checkout', 'rel-dup'))!.counters).toMatchObject({ facts: 1, duplicate: 0 });
    expect(record.stages.find((s) => s.name === 'prod')!.status).toBe('Healthy');
  });

  it('a release in flight is kept; a finished one expires after the configured TTL', async () => {
    const ttlOf = (id: string) => app.redis.requests.pttl(app.keys.release('checkout', id));
    const config = testConfig();
    const paused = rolloutBody({ generation: 60, rv: 6000, releaseId: 'rel-inflight', podHash: 'g2', stableRS: 'g1', step: 1, phase: 'Paused', name: 'checkout-other', uid: 'other-1' });
    await postJson(`${app.url}/v1/facts/rollouts`, paused);
    await waitFor(async () => (await app.store.get('checkout', 'rel-inflight')) ?? undefined, 'rel-inflight');
    // Kept while in flight: it expires only after settings.unfinishedReleaseTtlDays without news
    // (at most an hour more: expiries are moved on hourly, not on every fact; expiry-refresh.ts).
    const inflightTtl = await ttlOf('rel-inflight');
    expect(inflightTtl).toBeGreaterThan(config.settings.finishedReleaseTtlHours * 3_600_000);
    expect(inflightTtl).toBeLessThanOrEqual(config.settings.unfinishedReleaseTtlDays * 86_400_000 + MAX_EXPIRY_SLACK_MS);
    const done = rolloutBody({ generation: 50, rv: 5000, releaseId: 'rel-done', podHash: 'f1', stableRS: 'f1', phase: 'Healthy' });
    const staging = rolloutBody({ generation: 50, rv: 5001, releaseId: 'rel-done', podHash: 'f1', stableRS: 'f1', phase: 'Healthy', name: 'checkout-staging', uid: 'st-1', labels: { 'app.kubernetes.io/part-of': 'checkout', env: 'staging' } });
    const other = rolloutBody({ generation: 61, rv: 6001, releaseId: 'rel-done', podHash: 'f1', stableRS: 'f1', phase: 'Healthy', name: 'checkout-other', uid: 'other-1' });
    // Every Rollout the stages know of reaches the release: the release is complete.
    for (const body of [done, staging, other]) expect((await postJson(`${app.url}/v1/facts/rollouts`, body)).status).toBe(202);
    const record = await waitFor(async () => {
      const r = await app.store.get('checkout', 'rel-done');
      return r?.status === 'Complete' ? r : undefined;
    }, 'rel-done complete');
    expect(record.finishedAt).toBeDefined();
    const ttl = await ttlOf('rel-done');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(config.settings.finishedReleaseTtlHours * 3_600_000 + MAX_EXPIRY_SLACK_MS);
  });

  it('a token names its cluster: the same body from the dev token lands on no prod stage', async () => {
    const body = rolloutBody({ generation: 40, rv: 4000, releaseId: 'rel-dev-only', podHash: 'e1', stableRS: 'e1', phase: 'Healthy' });
    const res = await postJson(`${app.url}/v1/facts/rollouts`, body, DEV_TOKEN);
    expect(res.status).toBe(202);
    await waitFor(async () => (await app.facts.queue.getJobCounts('waiting', 'active')).waiting === 0 || undefined, 'queue drained');
    await waitFor(async () => {
      const text = await app.metrics.registry.getSingleMetricAsString('glidepath_facts_unmatched_total');
      return text.includes('glidepath_facts_unmatched_total{source="rollouts-webhook"} 1') || undefined;
    }, 'unmatched count');
    expect(await app.store.get('checkout', 'rel-dev-only')).toBeUndefined();
  });

  it.each([
    ['no token', { authorization: '' }, 401, 'unauthorized'],
    ['a wrong token', { authorization: 'Bearer nope-nope-nope-nope-nope' }, 401, 'unauthorized'],
    ['a form body', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
  ])('%s is refused and nothing is queued', async (_what, headers, status, code) => {
    const before = await app.facts.queue.count();
    const res = await fetch(`${app.url}/v1/facts/rollouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INGEST_TOKEN}`, ...headers },
      body: JSON.stringify(fixture('paused')),
    });
    expect(res.status).toBe(status);
    expect(((await res.json()) as any).error).toBe(code);
    expect(await app.facts.queue.count()).toBe(before);
  });

  it('bad bodies get a 4xx that names the field and the problem', async () => {
    const notJson = await postJson(`${app.url}/v1/facts/rollouts`, '{"event": ');
    expect(notJson.status).toBe(400);
    expect(notJson.json.error).toBe('invalid_json');

    const noGeneration = fixture('paused');
    delete noGeneration.rollout.metadata.generation;
    const missing = await postJson(`${app.url}/v1/facts/rollouts`, noGeneration);
    expect(missing.status).toBe(422);
    expect(missing.json.message).toMatch(/^rollout\.metadata\.generation: /);

    const wrongType = fixture('paused');
    wrongType.rollout.status.pauseConditions = 'yes';
    const typed = await postJson(`${app.url}/v1/facts/rollouts`, wrongType);
    expect(typed.status).toBe(422);
    expect(typed.json.issues[0].path).toBe('rollout.status.pauseConditions');

    const huge = fixture('paused');
    huge.rollout.metadata.annotations.big = 'x'.repeat(1_100_000);
    const tooBig = await postJson(`${app.url}/v1/facts/rollouts`, huge);
    expect(tooBig.status).toBe(413);

    const unknownPipeline = await postJson(`${app.url}/v1/releases`, { releaseId: 'r1', pipeline: 'nope', images: ['a/b:1'] }, CI_TOKEN);
    expect(unknownPipeline.status).toBe(422);
    expect(unknownPipeline.json.message).toBe('pipeline: unknown pipeline "nope" (known: checkout)');
  });

  it('the engine\'s real quirks are accepted: string observedGeneration, HPAReplicas, duration, annotations', async () => {
    const body = fixture('healthy');
    body.rollout.status.duration = { rolloutStartedAt: '2026-08-20T09:00:00Z', completionStatus: 'Promoted' };
    body.rollout.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = JSON.stringify({ kind: 'Rollout' });
    body.rollout.unknownTopLevel = { any: 'thing' };
    expect((await postJson(`${app.url}/v1/facts/rollouts`, body)).status).toBe(202);
  });

  it('CI announces a release: it exists before any cluster fact, with its commit and author', async () => {
    const res = await postJson(`${app.url}/v1/releases`, {
      releaseId: 'rel-ci-1',
      pipeline: 'checkout',
      images: ['registry.example.com/shop/checkout:2.0.0'],
      commit: 'abc1234def',
      pullRequestUrl: 'https://git.example.com/shop/pull/42',
      author: 'alice',
    }, CI_TOKEN);
    expect(res.status).toBe(202);
    const record = await waitFor(async () => (await app.store.get('checkout', 'rel-ci-1')) ?? undefined, 'announced release');
    expect(record).toMatchObject({ status: 'Announced', commit: 'abc1234def', author: 'alice', idSource: 'announcement' });
    const armed = await app.watchdog.queue.getDelayed();
    expect(armed.some((j) => j.data.releaseId === 'rel-ci-1')).toBe(true);
  });

  it('the read API needs its token', async () => {
    const res = await fetch(`${app.url}/v1/releases?pipeline=checkout`);
    expect(res.status).toBe(401);
    expect((await getJson(`${app.url}/v1/releases/checkout/does-not-exist`)).status).toBe(404);
  });

  it('health, readiness and metrics answer', async () => {
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/glidepath_facts_received_total\{source="rollouts-webhook"\} \d+/);
    expect(metrics).toMatch(/glidepath_facts_rejected_total\{source="rollouts-webhook",reason="unauthorized"\} \d+/);
    expect(metrics).toMatch(/glidepath_queue_jobs\{queue="facts",state="waiting"\} \d+/);
  });
});
