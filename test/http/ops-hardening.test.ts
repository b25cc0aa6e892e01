/** /metrics behind METRICS_TOKEN when set, and clients that hang up are not errors in the log (issue 9, item 10). */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { dropPrefix, INGEST_TOKEN, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { captureLogger, eventually } from '../helpers/slack-harness.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function start(overrides: Record<string, string>, logger = captureLogger().logger): Promise<Glidepath> {
  const env = testEnv(overrides);
  const app = await startTestGlidepath(testConfig(), env, { workers: false, logger });
  cleanup.push(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });
  return app;
}

describe('/metrics', () => {
  it('asks for METRICS_TOKEN when it is set', async () => {
    const app = await start({ METRICS_TOKEN });
    const without = await fetch(`${app.url}/metrics`);
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toBe('Bearer');
    expect(await without.json()).toEqual({ error: 'unauthorized', message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' });
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789abcdeX' } })).status).toBe(401);
    const scraped = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('glidepath_');
  });

  it('stays open without METRICS_TOKEN (as the README says)', async () => {
    const app = await start({});
    expect((await fetch(`${app.url}/metrics`)).status).toBe(200);
  });
});

describe('a client that hangs up mid-request', () => {
  it('is logged at debug, not as an error', async () => {
    const log = captureLogger();
    const app = await start({}, log.logger);
    const socket = connect(app.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    // Node answers 100 Continue as it hands the request to the handler: from then on the handler is reading the body.
    const handling = new Promise((resolve) => socket.once('data', resolve));
    socket.write(`POST /v1/facts/rollouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${INGEST_TOKEN}\r\nContent-Length: 10000\r\nExpect: 100-continue\r\n\r\n`);
    expect(String(await handling)).toMatch(/^HTTP\/1\.1 100 Continue/);
    socket.write('{"kind":');
    socket.resetAndDestroy();
    const line = await eventually(() => log.lines.find((l) => l.msg === 'client went away mid-request' || l.msg === 'request failed'), 'a log line about the aborted request');
    expect(line).toMatchObject({ level: 20, msg: 'client went away mid-request' });
    expect(log.lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  });
});
