/**
 * `sandbox/main.ts` as `npm run sandbox` runs it (tsx as node's loader), in a folder of its own
 * and on a free port, with what it prints collected: for tests that talk to the story while it runs.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../sandbox/main.ts', import.meta.url));

export interface SandboxProcess {
  child: ChildProcessWithoutNullStreams;
  /** The folder it writes its config and kubeconfig into (the caller removes it). */
  dir: string;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  exited: Promise<number | null>;
}

export function startSandboxProcess(args: string[], dirPrefix = 'gp-sandbox-'): SandboxProcess {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, PORT: '0', SANDBOX_DIR: dir, LOG_LEVEL: 'error' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, dir, output: () => out, exited };
}
