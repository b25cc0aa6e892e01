/**
 * CI announces releases with tokens of its own, each bound to pipelines; a cluster's ingest
 * token cannot announce. What was announced cannot be changed afterwards, and the
 * pull-request link only points at configured hosts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { parseEnv } from '../../src/config/env.js';
import { CI_TOKEN, DEV_TOKEN, dropPrefix, INGEST_TOKEN, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const LEDGER = `
  - name: ledger
    channel: C0123LEDGER
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: ledger, selector: "app=ledger" }
`;
const LEDGER_TOKEN = 'ci-ledger-token-0123456789abcdef';

const announcement = (releaseId: string, extra: Record<string, unknown> = {}) => ({
  releaseId,
  pipeline: 'checkout',
  images: ['registry.example.com/shop/checkout:3.0.0'],
  commit: 'abc1234def',
  pullRequestUrl: 'https://git.example.com/shop/pull/7',
  author: 'alice',
  ...extra,
});

describe('CI announcements', () => {
  const env = testEnv({ CI_TOKENS: `checkout=${CI_TOKEN},ledger=${LEDGER_TOKEN}` });
  let app: Glidepath;
  let url: string;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(LEDGER), env);
    url = `${app.url}/v1/releases`;
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('a cluster ingest token cannot announce a release (403 with the reason), and nothing is recorded', async () => {
    for (const token of [DEV_TOKEN, INGEST_TOKEN]) {
      const res = await postJson(url, announcement('rel-forged'), token);
      expect(res.status).toBe(403);
      expect(res.json.message).toMatch(/^the ingest token of cluster "(dev|prod)" cannot announce releases; CI announces with its own token/);
    }
    expect((await postJson(url, announcement('rel-forged'), 'not-a-token-at-all-000000')).status).toBe(401);
    expect(await app.store.get('checkout', 'rel-forged')).toBeUndefined();
  });

  it('a CI token announces only the pipelines it is bound to', async () => {
    const res = await postJson(url, announcement('rel-other', { pipeline: 'ledger' }), CI_TOKEN);
    expect(res.status).toBe(403);
    expect(res.json.message).toBe('this CI token may announce releases of checkout only, not of pipeline "ledger"');
    expect((await postJson(url, announcement('rel-other', { pipeline: 'ledger' }), LEDGER_TOKEN)).status).toBe(202);
  });

  it('a CI token cannot send cluster facts', async () => {
    const body = rolloutBody({ generation: 2, rv: 20, releaseId: 'rel-ci-fact', podHash: 'c1', stableRS: 'c1', phase: 'Healthy' });
    const res = await postJson(`${app.url}/v1/facts/rollouts`, body, CI_TOKEN);
    expect(res.status).toBe(403);
  });

  it('an announced release cannot be changed (409 naming the fields); the same announcement again is 202', async () => {
    expect((await postJson(url, announcement('rel-fixed'), CI_TOKEN)).status).toBe(202);
    await waitFor(async () => (await app.store.get('checkout', 'rel-fixed')) ?? undefined, 'announced');
    expect((await postJson(url, announcement('rel-fixed'), CI_TOKEN)).status).toBe(202);
    // Leaving a field out changes nothing, so it agrees too.
    expect((await postJson(url, announcement('rel-fixed', { author: undefined, commit: undefined }), CI_TOKEN)).status).toBe(202);

    const changed = await postJson(url, announcement('rel-fixed', { images: ['registry.example.com/shop/checkout:6.6.6'], author: 'mallory' }), CI_TOKEN);
    expect(changed.status).toBe(409);
    expect(changed.json.fields).toEqual(['images', 'author']);
    expect(changed.json.message).toBe('release rel-fixed of checkout was announced with another images, author; an announced release cannot be changed (announce a new release id)');
    const link = await postJson(url, announcement('rel-fixed', { pullRequestUrl: 'https://git.example.com/shop/pull/666' }), CI_TOKEN);
    expect(link.status).toBe(409);
    expect(link.json.fields).toEqual(['pullRequestUrl']);

    await waitFor(async () => (await app.facts.queue.getJobCounts('waiting', 'active')).waiting === 0 || undefined, 'queue drained');
    expect(await app.store.get('checkout', 'rel-fixed')).toMatchObject({
      images: ['registry.example.com/shop/checkout:3.0.0'],
      author: 'alice',
      commit: 'abc1234def',
      pullRequestUrl: 'https://git.example.com/shop/pull/7',
    });
  });

  it('of racing announcements with different details exactly one wins, and the record is the winner\'s', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => announcement('rel-race', { author: `author-${i}` }));
    const answers = await Promise.all(bodies.map((b) => postJson(url, b, CI_TOKEN)));
    const won = answers.map((a, i) => [a.status, i] as const).filter(([status]) => status === 202);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(11);
    const record = await waitFor(async () => (await app.store.get('checkout', 'rel-race')) ?? undefined, 'raced release');
    expect(record.author).toBe(`author-${won[0]![1]}`);
  });

  it('the Slack ids of the author and the merger are kept on the release (the approvals gate leaves them out), checked (422) and fixed once announced (409)', async () => {
    const bad = await postJson(url, announcement('rel-who', { authorSlackId: 'alice', mergedBySlackId: 'U0BOB' }), CI_TOKEN);
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe('authorSlackId: must be a Slack user id such as U0123ABCD');
    expect((await postJson(url, announcement('rel-who', { authorSlackId: 'U0ALICE', mergedBySlackId: 'U0BOB' }), CI_TOKEN)).status).toBe(202);
    const record = await waitFor(async () => (await app.store.get('checkout', 'rel-who')) ?? undefined, 'announced with Slack ids');
    expect(record).toMatchObject({ authorSlackId: 'U0ALICE', mergedBySlackId: 'U0BOB' });
    const changed = await postJson(url, announcement('rel-who', { authorSlackId: 'U0ALICE', mergedBySlackId: 'U0MALLORY' }), CI_TOKEN);
    expect(changed.status).toBe(409);
    expect(changed.json.fields).toEqual(['mergedBySlackId']);
  });

  it('pullRequestUrl must be an https link to a configured host (422)', async () => {
    const elsewhere = await postJson(url, announcement('rel-link', { pullRequestUrl: 'https://evil.example.net/pull/1' }), CI_TOKEN);
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.json.message).toBe('pullRequestUrl: host "evil.example.net" is not one of settings.pullRequestHosts (git.example.com)');
    const plain = await postJson(url, announcement('rel-link', { pullRequestUrl: 'http://git.example.com/shop/pull/1' }), CI_TOKEN);
    expect(plain.status).toBe(422);
    expect(plain.json.message).toBe('pullRequestUrl: must be an https link');
    expect(await app.store.get('checkout', 'rel-link')).toBeUndefined();
  });
});

describe('CI_TOKENS', () => {
  it('binds each token to pipelines; a token shared with a cluster is refused at start-up', () => {
    const env = parseEnv({ CI_TOKENS: 'checkout=aaaaaaaaaaaaaaaaaaaa, ledger=aaaaaaaaaaaaaaaaaaaa,web=bbbbbbbbbbbbbbbbbbbb' });
    expect([...env.CI_TOKENS.entries()]).toEqual([
      ['aaaaaaaaaaaaaaaaaaaa', ['checkout', 'ledger']],
      ['bbbbbbbbbbbbbbbbbbbb', ['web']],
    ]);
    expect(() => parseEnv({ INGEST_TOKENS: 'prod=aaaaaaaaaaaaaaaaaaaa', CI_TOKENS: 'checkout=aaaaaaaaaaaaaaaaaaaa' })).toThrow(
      /CI_TOKENS: the token of pipeline\(s\) checkout is also the ingest token of cluster "prod"/,
    );
    expect(() => parseEnv({ CI_TOKENS: 'checkout=short' })).toThrow(/the token for pipeline "checkout" is shorter than 16 characters/);
  });
});
