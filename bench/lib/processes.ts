/** Child processes for benchmarks, and their peak memory from /proc (VmHWM). */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function peakRssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return 0;
  }
}

/**
 * A thread's time on a core and time runnable but waiting for one, since it started (ms), from
 * /proc/<pid>/schedstat (the process's main thread). On a shared machine the wait is what a
 * latency percentile pays that no code change in the process can take back.
 */
export function schedStat(pid: number | undefined): { ranMs: number; waitedMs: number } {
  try {
    const [ran, waited] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { ranMs: (ran ?? 0) / 1e6, waitedMs: (waited ?? 0) / 1e6 };
  } catch {
    return { ranMs: 0, waitedMs: 0 };
  }
}

/**
 * The node flags `npm start` runs Glidepath with (package.json's start script; the image's CMD
 * gives the same, test/deploy/node-flags.test.ts), but for where it reads its .env: a bench's
 * Glidepath processes run as production does.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  if (words[0] !== 'node') throw new Error(`package.json's start script does not run node: ${pkg.scripts.start}`);
  return words.slice(1).filter((w) => w.startsWith('--') && !w.startsWith('--env-file'));
}

export interface Child {
  process: ChildProcess;
  /** First message the child sent (e.g. its URL). */
  hello: any;
  request(message: unknown): Promise<any>;
  stop(): Promise<void>;
}

/** Starts a child; a `.ts` script runs through tsx, a compiled `.js` one on plain node (as production runs). `nodeArgs`: e.g. --cpu-prof. */
export async function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const execArgv = [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), ...nodeArgs];
  const child = fork(script, [], { execArgv, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const hello = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return {
    process: child,
    hello,
    request(message) {
      return new Promise((resolve) => {
        child.once('message', resolve);
        child.send(message as never);
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
