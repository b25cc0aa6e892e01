/**
 * Bounded work before authentication (issue 9, item 2): a client without Slack's signing secret
 * costs a header parse on /slack/events, never a buffered body, a held connection or a minute.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { signature } from '../../sandbox/slack/sender.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { startSlackGlidepath, type SlackGlidepath } from '../helpers/slack-glidepath.js';

const FOUR_MIB = 4 * 1024 * 1024;

interface Exchange {
  /** Status line of the answer ('' when the server closed without one). */
  status: string;
  /** Body bytes this client had written when the connection closed. */
  sent: number;
}

/**
 * Sends the head, then body bytes: `once` bytes and nothing more (a slow client), or, with
 * `stream`, chunk after chunk as fast as the server takes them and never the end. Resolves when
 * the server closes the connection.
 */
function exchange(port: number, head: string, body: { once?: number; stream?: boolean }): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    let open = true;
    const chunk = Buffer.alloc(16 * 1024, 'a');
    socket.on('data', (data) => {
      answer += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open = false;
      resolve({ status: answer.split('\r\n')[0] ?? '', sent });
    });
    socket.write(head);
    if (body.once) {
      socket.write(Buffer.alloc(body.once, 'a'));
      sent += body.once;
    }
    if (body.stream) {
      const pump = (): void => {
        while (open && !answer) {
          sent += chunk.length;
          if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    }
  });
}

function head(headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  return `POST /slack/events HTTP/1.1\r\nHost: glidepath\r\nContent-Type: application/json\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** Headers shaped like Slack's, signed with a secret that is not Glidepath's. */
function forged(): Record<string, string | number> {
  const timestamp = Math.floor(Date.now() / 1000);
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature('not-the-secret', timestamp, '{}') };
}

describe('/slack/events before authentication', () => {
  let slack: SlackGlidepath;
  beforeAll(async () => {
    slack = await startSlackGlidepath();
  });
  afterAll(async () => {
    await slack?.close();
  });

  it('answers 100 concurrent slow unsigned 4 MiB bodies with 401 after their first KiB, and closes them', async () => {
    const port = slack.glidepath.port;
    const answers = await Promise.all(Array.from({ length: 100 }, () => exchange(port, head({ 'content-length': FOUR_MIB }), { once: 1024 })));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill('HTTP/1.1 401 Unauthorized'));
    expect((await fetch(`${slack.glidepath.url}/healthz`)).status).toBe(200);
  });

  it('refuses a forged request declaring 4 MiB with 413 before reading its body', async () => {
    const port = slack.glidepath.port;
    const answers = await Promise.all(Array.from({ length: 100 }, () => exchange(port, head({ ...forged(), 'content-length': FOUR_MIB }), { once: 1024 })));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill('HTTP/1.1 413 Payload Too Large'));
  });

  it('stops reading an undeclared (chunked) forged body at 64 KiB: 413, connection closed, memory bounded', async () => {
    const port = slack.glidepath.port;
    const before = process.memoryUsage().rss;
    const answers = await Promise.all(Array.from({ length: 100 }, () => exchange(port, head({ ...forged(), 'transfer-encoding': 'chunked' }), { stream: true })));
    const grown = process.memoryUsage().rss - before;
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill('HTTP/1.1 413 Payload Too Large'));
    // Buffering each body up to Bolt's 4 MiB would take 400 MiB; 100 × 64 KiB is 6.4 MiB.
    expect(grown).toBeLessThan(100 * 1024 * 1024);
  });

  it('refuses timestamps outside the replay window from the headers alone', async () => {
    const port = slack.glidepath.port;
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const stale = await exchange(port, head({ 'x-slack-request-timestamp': old, 'x-slack-signature': signature('x', old, ''), 'content-length': FOUR_MIB }), { once: 1024 });
    expect(stale.status).toBe('HTTP/1.1 401 Unauthorized');
    const malformed = await exchange(port, head({ 'x-slack-request-timestamp': 'soon', 'x-slack-signature': 'v0=abc', 'content-length': FOUR_MIB }), { once: 1024 });
    expect(malformed.status).toBe('HTTP/1.1 401 Unauthorized');
  });
});

describe('request and header timeouts of seconds', () => {
  let slack: SlackGlidepath;
  beforeAll(async () => {
    slack = await startSlackGlidepath({ HTTP_REQUEST_TIMEOUT_MS: '1500', HTTP_HEADERS_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await slack?.close();
  });

  it('ends a forged request whose body never finishes with 408 (request timeout of seconds)', async () => {
    const answer = await exchange(slack.glidepath.port, head({ ...forged(), 'content-length': 10_000 }), { once: 1024 });
    expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('ends a connection whose headers never finish (header timeout)', async () => {
    const answer = await exchange(slack.glidepath.port, 'POST /slack/events HTTP/1.1\r\nHost: glidepath\r\nX-Slow: ', {});
    expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  });
});

describe('connection cap', () => {
  const env = testEnv({ HTTP_MAX_CONNECTIONS: '20' });
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env, { workers: false });
  });
  afterAll(async () => {
    await app?.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('closes connections over HTTP_MAX_CONNECTIONS at once and keeps serving the ones it holds', async () => {
    const sockets: Socket[] = [];
    const closedAt: number[] = [];
    for (let i = 0; i < 30; i++) {
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => closedAt.push(i));
      await new Promise((resolve) => socket.once('connect', resolve));
      sockets.push(socket);
    }
    // The held ones still answer; the server has seen all 30 by the time the 20th answers.
    const first = sockets[0]!;
    const reply = new Promise<string>((resolve) => first.once('data', (d) => resolve(d.toString('latin1').split('\r\n')[0] ?? '')));
    first.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await reply).toBe('HTTP/1.1 200 OK');
    await new Promise<void>((resolve) => {
      const check = (): void => (closedAt.length >= 10 ? resolve() : void setTimeout(check, 20));
      check();
    });
    expect(closedAt.sort((a, b) => a - b)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    for (const s of sockets) s.destroy();
  });
});
