import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { dropPrefix, getJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';

describe('audit log', () => {
  const env = testEnv();
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env, { workers: false });
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('keeps every attempt, newest first, readable through GET /v1/audit with paging and filters', async () => {
    await app.audit.append({ actor: { slackUserId: 'U0ALICE', name: 'alice' }, action: 'approve', target: 'prod/shop/checkout', result: 'denied', reason: 'not allowed' });
    await app.audit.append({ actor: { slackUserId: 'U0BOB' }, action: 'abort', target: 'prod/shop/checkout', result: 'done', before: { abort: false }, after: { abort: true } });
    await app.audit.append({ actor: { slackUserId: 'U0ALICE' }, action: 'approve', target: 'prod/shop/checkout', result: 'done' });

    const all = await getJson(`${app.url}/v1/audit`);
    expect(all.status).toBe(200);
    expect(all.json.entries.map((e: any) => `${e.actor.slackUserId} ${e.action} ${e.result}`)).toEqual(['U0ALICE approve done', 'U0BOB abort done', 'U0ALICE approve denied']);
    expect(all.json.entries[1]).toMatchObject({ before: { abort: false }, after: { abort: true } });

    const page = await getJson(`${app.url}/v1/audit?limit=1`);
    expect(page.json.entries).toHaveLength(1);
    const next = await getJson(`${app.url}/v1/audit?limit=5&before=${page.json.next}`);
    expect(next.json.entries.map((e: any) => e.action)).toEqual(['abort', 'approve']);

    const alice = await getJson(`${app.url}/v1/audit?actor=U0ALICE`);
    expect(alice.json.entries).toHaveLength(2);
    expect((await fetch(`${app.url}/v1/audit`)).status).toBe(401);
    expect((await getJson(`${app.url}/v1/audit?limit=0`)).status).toBe(400);
  });
});
