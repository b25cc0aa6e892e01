/**
 * Ctrl-C in a terminal sends SIGINT to every process of the foreground group: to npm and to the
 * node process it runs, which then hears the signal twice (npm relays it). The sandbox must still
 * remove every Redis key it wrote, as the README says. Run as the README says (
 * `npm run sandbox`, in a process group of its own), interrupted as a terminal would.
 *
 * The script runs node with tsx as a loader, not the `tsx` command: that command relays a signal
 * and, unless the child answers over its IPC channel within 30 ms (twice), SIGKILLs it. A sandbox
 * busy on a loaded machine missed that window and died mid-clean-up, leaving its keys (CI, stop 27).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { redisClient } from '../helpers/slack-harness.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const redis = redisClient();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  redis.disconnect();
});

async function keysUnder(prefix: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[{}*?[\]]/g, '\\$&')}*`, 'COUNT', 1000);
    cursor = next;
    n += keys.length;
  } while (cursor !== '0');
  return n;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('Ctrl-C of `npm run sandbox`', () => {
  it('SIGINT to the whole process group (npm relays it: the sandbox hears it twice) still removes every key the sandbox wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-sandbox-sig-'));
    dirs.push(dir);
    // The README's command itself: npm runs node (tsx as its loader); both hear the terminal's SIGINT.
    const child = spawn('npm', ['run', '--silent', 'sandbox', '--', '--speed', '10'], {
      env: { ...process.env, PORT: '0', SANDBOX_DIR: dir, LOG_LEVEL: 'error', REDIS_URL: 'redis://127.0.0.1:6379' },
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as a terminal gives a foreground job.
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const prefix = await waitFor(async () => /Redis +\S+ +\(keys under (\{glidepath-sandbox-[0-9a-f]+\})/.exec(out)?.[1], `the banner's Redis line\n${out}`, 60_000);
      // The first release settled: records, threads and queues are in Redis.
      await waitFor(async () => /✓ rel-1\.28\.0 · Complete/.test(out), `the first release to settle\n${out}`, 90_000);
      expect(await keysUnder(prefix)).toBeGreaterThan(20);
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      // npm goes at once (it dies of the signal); the sandbox behind it is done when the group is gone.
      await waitFor(async () => !groupAlive(child.pid!), `every process of the group to exit\n${out}`, 60_000);
      expect(out).not.toMatch(/could not stop/);
      expect(await keysUnder(prefix), out).toBe(0);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone: every process of it has exited.
      }
    }
  }, 180_000);
});
