/**
 * Glidepath's Redis connections send the commands of one turn of the event loop in one socket
 * write (src/store/coalesced-writes.ts), through the same connectTarget every process uses: every
 * reply still goes to its own command, BullMQ's included, and a reconnected socket coalesces too.
 * Real Redis (the shared one, under this test's own prefix).
 */
import type { Socket } from 'node:net';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { connectTarget, redisTargetFromEnv } from '../../src/wiring/redis-target.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const opened: Redis[] = [];
const prefixes: string[] = [];

function connect(): Redis {
  const redis = connectTarget(redisTargetFromEnv({ REDIS_URL }), { maxRetriesPerRequest: null });
  opened.push(redis);
  return redis;
}

/** How many times the client's current socket handed bytes to the kernel since this was called. */
function countWrites(redis: Redis): () => number {
  const socket = (redis as unknown as { stream: Socket & { _write: Socket['_write']; _writev?: Socket['_writev'] } }).stream;
  let writes = 0;
  const write = socket._write.bind(socket);
  const writev = socket._writev?.bind(socket);
  socket._write = (...args) => {
    writes++;
    return write(...args);
  };
  if (writev) {
    socket._writev = (...args) => {
      writes++;
      return writev(...args);
    };
  }
  return () => writes;
}

afterEach(async () => {
  for (const r of opened.splice(0)) r.disconnect();
  for (const p of prefixes.splice(0)) await dropPrefix(p, REDIS_URL);
});

describe('coalesced Redis writes', () => {
  it('commands sent in one turn leave in a write or two, and each gets its own reply', async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const redis = connect();
    await redis.ping();
    const writes = countWrites(redis);
    const n = 300;
    // Strings, numbers, a script with a Buffer argument and a MULTI, all in one turn.
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const key = `${prefix}:k${i % 17}`;
        if (i % 5 === 0) return redis.eval('return ARGV[1] .. #KEYS', 1, key, Buffer.from(`b${i}`)).then((r) => [i, r]);
        if (i % 7 === 0) return redis.multi().incr(`${key}:n`).get(`${key}:n`).exec().then((r) => [i, r?.[1]?.[1]]);
        return redis.set(`${prefix}:s${i}`, `v${i}`).then(() => redis.get(`${prefix}:s${i}`)).then((r) => [i, r]);
      }),
    );
    for (const [i, reply] of replies as [number, unknown][]) {
      if (i % 5 === 0) expect(reply).toBe(`b${i}1`);
      else if (i % 7 === 0) expect(Number(reply)).toBeGreaterThan(0);
      else expect(reply).toBe(`v${i}`);
    }
    // Two turns of commands (the SETs, then the GETs their replies sent): without coalescing, one write per command (~530).
    expect(writes()).toBeLessThan(20);
  });

  it('a reconnected client coalesces on its new socket, and BullMQ on the same connection still moves its jobs', async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const redis = connect();
    await redis.ping();
    const id = await redis.client('ID');
    const streamOf = () => (redis as unknown as { stream: Socket }).stream;
    const killed = streamOf();
    const killer = connect();
    await killer.client('KILL', 'ID', String(id));
    // Reconnected: a new socket, and it answers (a ping on the killed one is sent again once it is).
    await waitFor(async () => (streamOf() !== killed && (await redis.ping()) === 'PONG') || undefined, 'the client reconnected on a new socket');
    expect(Number(await redis.client('ID'))).not.toBe(Number(id));
    const writes = countWrites(redis);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => redis.incrby(`${prefix}:after`, i + 1)));
    expect(Math.max(...results)).toBe((100 * 101) / 2);
    expect(writes()).toBeLessThan(5);

    // BullMQ's scripts share the connections Glidepath gives it (the workers connection).
    const queue = new Queue('coalesced', { connection: redis, prefix });
    const done: number[] = [];
    const worker = new Worker('coalesced', async (job) => void done.push(job.data.n as number), { connection: redis, prefix, concurrency: 16 });
    await Promise.all(Array.from({ length: 50 }, (_, n) => queue.add('job', { n })));
    await waitFor(async () => done.length === 50 || undefined, 'the jobs ran');
    expect([...done].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 50, failed: 0 });
    await worker.close();
    await queue.close();
  });
});
