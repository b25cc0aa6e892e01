/** A redis-server of the test's own, on a free port, for fault tests (never the shared one at 6379). */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../sandbox/ensure-redis.js';
import { waitFor } from './wait.js';

export class OwnRedis {
  private child?: ChildProcess;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.start();
    return r;
  }

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(async () => {
      const probe = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' || undefined;
      } finally {
        probe.disconnect();
      }
    }, `redis-server on ${this.port}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}
