/**
 * A redis-server of the test's (or bench's) own, on a free port, for fault tests (never the shared
 * one at 6379). With `aof`, every write is fsync'd to an append-only file in a directory of its
 * own, so a kill -9 loses nothing acknowledged (bench:faults); `cleanup()` removes that directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../sandbox/ensure-redis.js';
import { waitFor } from './wait.js';

export interface OwnRedisOptions {
  aof?: boolean;
  /** More redis-server arguments, e.g. `--maxmemory-policy allkeys-lru` (settings a test must never give the shared Redis). */
  args?: string[];
}

export class OwnRedis {
  private child?: ChildProcess;
  private readonly dir?: string;
  private readonly args: readonly string[];
  constructor(
    readonly port: number,
    options: OwnRedisOptions = {},
  ) {
    if (options.aof) this.dir = mkdtempSync(join(tmpdir(), 'glidepath-redis-'));
    this.args = options.args ?? [];
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(options: OwnRedisOptions = {}): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort(), options);
    await r.start();
    return r;
  }

  async start(): Promise<void> {
    const persistence = this.dir ? ['--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', ...persistence, ...this.args], { stdio: 'ignore' });
    await waitFor(async () => {
      const probe = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true, enableReadyCheck: false });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        // A server started with --requirepass answers NOAUTH: up, all the same.
        const answer = await probe.ping().catch((err: Error) => (/^NOAUTH/.test(err.message) ? 'PONG' : Promise.reject(err)));
        return answer === 'PONG' || undefined;
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

  /** Removes the append-only file's directory (after stop). */
  cleanup(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
