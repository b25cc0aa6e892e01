/** Real parts for Slack tests: a Redis prefix of our own, a pino logger we can read, an HTTP server like src/http's. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { deleteKeysWithPrefix } from '../../src/store/redis.js';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { waitFor } from './wait.js';

/** A Redis prefix (hash tag) of the test's own. */
export { uniquePrefix as testPrefix } from './glidepath.js';

/** Deletes only the keys under our own prefix. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  await deleteKeysWithPrefix(redis, prefix);
}

export function redisClient(): Redis {
  return new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
}

export interface CapturedLogger {
  logger: Logger;
  lines: Record<string, unknown>[];
}

export function captureLogger(): CapturedLogger {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** A server that routes POST /slack/events to the Slack adapter, as Glidepath's HTTP server does (for tests of the Bolt app alone). */
export async function serveSlackEvents(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/slack/events') void handle(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits for a condition on durable state (the transcript, Redis), never for elapsed time as such. */
export function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  return waitFor(async () => probe(), what, timeoutMs);
}
