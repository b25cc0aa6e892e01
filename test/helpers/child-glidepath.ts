/**
 * A Glidepath fixture (test/fixtures/*-child.ts) in a child process of its own, forked with tsx:
 * resolves once it says it is ready (its first IPC message), with the lines it printed so far and
 * from then on, so a test can read what it logged (a refused write, a lost lock). Rejects if it
 * exits before it is ready.
 */
import { fork, type ChildProcess } from 'node:child_process';

export interface GlidepathChild {
  process: ChildProcess;
  /** Lines of its stdout (none with `stdout: 'ignore'`). */
  lines: string[];
}

export function forkGlidepathChild(path: string, env: Record<string, string>, o: { stdout?: 'pipe' | 'ignore' } = {}): Promise<GlidepathChild> {
  const child = fork(path, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', o.stdout ?? 'pipe', 'inherit', 'ipc'] });
  const lines: string[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l.length > 0));
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve({ process: child, lines }));
    child.once('exit', (code) => reject(new Error(`${path} exited with ${code} before it was ready`)));
  });
}
