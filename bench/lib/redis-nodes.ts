/**
 * redis-server processes of a benchmark's (or test's) own, on free ports, in temp dirs removed
 * at stop: one node, or a Redis Cluster of N masters (`--cluster-enabled yes`, then
 * `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`). Never the shared 6379.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../../sandbox/ensure-redis.js';

const run = promisify(execFile);

export interface RedisNodes {
  ports: number[];
  /** REDIS_CLUSTER_NODES for a cluster; undefined for one node. */
  clusterNodes?: string;
  url: string;
  /** INFO commandstats of each node: total calls (minus the INFO/CONFIG calls of the measurement itself). */
  commandCalls(): Promise<number[]>;
  /** INFO commandstats summed over the nodes, by command (the measurement's own calls left out). */
  commandsByName(): Promise<Map<string, number>>;
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, limitMs = 20_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function direct(port: number): Redis {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, lazyConnect: false });
  r.on('error', () => undefined);
  return r;
}

export async function startRedisNodes(count: number, options: { cluster: boolean }): Promise<RedisNodes> {
  const dir = mkdtempSync(join(tmpdir(), 'gp-redis-'));
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  const children: ChildProcess[] = ports.map((port) => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'];
    if (options.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000');
    return spawn('redis-server', args, { stdio: 'ignore' });
  });
  const clients = ports.map(direct);
  const stop = async () => {
    clients.forEach((c) => c.disconnect());
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const c of clients) await until(async () => ((await c.ping()) === 'PONG' ? true : undefined), 'redis-server');
    if (options.cluster) {
      await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
      for (const c of clients) await until(async () => ((await c.cluster('INFO')) as string).includes('cluster_state:ok') || undefined, 'cluster_state:ok');
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    ...(options.cluster ? { clusterNodes: ports.map((p) => `127.0.0.1:${p}`).join(',') } : {}),
    url: `redis://127.0.0.1:${ports[0]}`,
    async commandCalls() {
      return Promise.all(
        clients.map(async (c) => {
          const info = await c.info('commandstats');
          let calls = 0;
          for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (!['info', 'config|resetstat', 'config'].includes(m[1] as string)) calls += Number(m[2]);
          return calls;
        }),
      );
    },
    async commandsByName() {
      const out = new Map<string, number>();
      for (const c of clients) {
        const info = await c.info('commandstats');
        for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
          const name = m[1] as string;
          if (!['info', 'config|resetstat', 'config'].includes(name)) out.set(name, (out.get(name) ?? 0) + Number(m[2]));
        }
      }
      return out;
    },
    async resetStats() {
      await Promise.all(clients.map((c) => c.config('RESETSTAT')));
    },
    stop,
  };
}
