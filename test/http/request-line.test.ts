/** The server answers every request line and header it is sent, and keeps answering. */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';

/** Sends raw bytes and resolves with the status line of the answer ('' when the server just closed). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(request.slice(0, 80))}`)));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) socket.end();
    });
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(answer.split('\r\n')[0] ?? '') : reject(err)));
    socket.write(request);
  });
}

describe('HTTP request targets and headers', () => {
  const env = testEnv();
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env);
  });
  afterAll(async () => {
    await app?.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it.each(['http://[::1', 'http://', 'http://1.2.3.4.5/', 'http://a:b@c:99999/healthz'])('answers 400 to the target %s and stays up', async (target) => {
    const status = await raw(app.port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(status).toBe('HTTP/1.1 400 Bad Request');
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });

  it('never fails with a 5xx or stops, whatever the request line and headers', async () => {
    const token = fc.stringMatching(/^[!-~]{0,40}$/);
    const methods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH');
    const targets = fc.oneof(
      token,
      fc.constantFrom('/v1/facts/rollouts', '/v1/releases/a/%E0%A4%A', '/slack/events', '//', '/%', '*', 'http://[', 'http://x:0/'),
      fc.tuple(fc.constantFrom('http://', 'https://', '/', '//'), token).map(([a, b]) => a + b),
    );
    const headerValue = fc.stringMatching(/^[ -~]{0,60}$/);
    const headers = fc.array(fc.tuple(fc.constantFrom('content-type', 'content-length', 'authorization', 'x-slack-signature', 'x-slack-request-timestamp', 'host', 'transfer-encoding'), headerValue), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(methods, targets, headers, async (method, target, hs) => {
        const lines = hs.map(([k, v]) => `${k}: ${v}`).join('\r\n');
        const status = await raw(app.port, `${method} ${target} HTTP/1.1\r\n${lines}${lines ? '\r\n' : ''}Connection: close\r\n\r\n`);
        const code = Number(status.split(' ')[1] ?? 0);
        expect(code < 500 || status === '').toBe(true);
      }),
      { numRuns: 300 },
    );
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  }, 60_000);
});
