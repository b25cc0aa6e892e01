/** The sandbox needs a Redis: the one at REDIS_URL, or a redis-server of its own on a free port. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A TCP port nobody listens on right now (127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function ensureRedis(url: string): Promise<{ url: string; child?: ChildProcess }> {
  if (await answers(url)) return { url };
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
    // Its own process group: Ctrl-C in the terminal must not stop it before the sandbox's clean-up has run.
    detached: true,
  });
  const started = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.once('spawn', () => resolve(true));
  });
  if (!started) throw new Error(`no Redis answers at ${url}, and redis-server could not be started: install Redis or set REDIS_URL`);
  const own = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await answers(own)) return { url: own, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error('redis-server started but does not answer');
}
