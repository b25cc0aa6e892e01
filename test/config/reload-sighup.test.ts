/**
 * Reload in the real entry point (src/main.ts in a child process, its config mounted as a
 * ConfigMap is): SIGHUP re-reads the file (the same file is counted unchanged), a new file by
 * symlink swap is applied and its hash shown on /readyz and /metrics, and a broken one is refused
 * with its problem by path in the log, the running hash kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountConfig, type ConfigMount } from '../helpers/config-mount.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainTs = join(root, 'src/main.ts');
const tsxLoader = join(root, 'node_modules/tsx/dist/loader.mjs');
const config = (channel: string) => `
clusters: [{ name: prod, kubeconfigContext: prod }]
pipelines:
  - name: checkout
    channel: ${channel}
    stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=checkout" } }]
`;

describe('glidepath (src/main.ts) reloads its config', () => {
  const prefix = uniquePrefix();
  let mount: ConfigMount;
  let child: ChildProcess;
  const lines: string[] = [];
  let url = '';
  const metrics = async (): Promise<string> => (await fetch(`${url}/metrics`)).text();
  const reloads = async (result: string): Promise<number> => Number(new RegExp(`glidepath_config_reload_total\\{result="${result}"\\} (\\d+)`).exec(await metrics())?.[1] ?? 0);
  const readyHash = async (): Promise<string | undefined> => ((await (await fetch(`${url}/readyz`)).json()) as { config?: { hash: string } }).config?.hash;

  beforeAll(async () => {
    mount = mountConfig(config('C0CHECKOUT'));
    // The writer role alone: no cluster is reached at start-up, and without a Slack token it writes nothing.
    child = spawn(process.execPath, ['--import', tsxLoader, mainTs], {
      env: { PATH: process.env.PATH, GLIDEPATH_CONFIG: mount.path, GLIDEPATH_ROLE: 'writer', PORT: '0', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const port = await waitFor(async () => lines.map((l) => /"port":(\d+).*glidepath listening/.exec(l)?.[1]).find(Boolean), 'glidepath listening', 60_000);
    url = `http://127.0.0.1:${port}`;
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await dropPrefix(prefix);
  });

  it('shows the hash of the file it started with', async () => {
    expect(await readyHash()).toBe(mount.hash);
    expect(await metrics()).toContain(`glidepath_config_info{hash="${mount.hash}"} 1`);
  });

  it('SIGHUP re-reads the file: the same file is counted unchanged', async () => {
    child.kill('SIGHUP');
    await waitFor(async () => ((await reloads('unchanged')) === 1 ? true : undefined), 'the SIGHUP reload counted');
    expect(child.exitCode).toBeNull();
  });

  it('a new file is applied and shown; SIGHUP after it finds it running', async () => {
    mount.swap(config('C0CHECKOUT2'));
    await waitFor(async () => ((await readyHash()) === mount.hash ? true : undefined), 'the new hash on /readyz');
    expect(await reloads('applied')).toBe(1);
    child.kill('SIGHUP');
    await waitFor(async () => ((await reloads('unchanged')) === 2 ? true : undefined), 'the second SIGHUP counted unchanged');
  });

  it('a broken file is refused, its problem logged by path, and the running hash stays', async () => {
    const running = mount.hash;
    mount.swap(config('"#checkout"'));
    child.kill('SIGHUP');
    await waitFor(async () => ((await reloads('refused')) >= 1 ? true : undefined), 'the refusal counted');
    await waitFor(async () => lines.find((l) => l.includes('config reload refused') && l.includes('pipelines[0].channel: must be a Slack channel id such as C0123ABCD (not a #name)')), 'the refusal logged by path');
    expect(await readyHash()).toBe(running);
    expect(child.exitCode).toBeNull();
  });
});
