/**
 * A stand-in cluster that can turn hostile (KubeServer.hostile), the Rollouts simulator, the
 * Slack stand-in, and a Glidepath in a child process watching the cluster (`facts: watch`, every
 * role, a modest heap), for issue 20's attacks from outside: the child may run out of memory or
 * die, and the world measures it as an operator would (its pid's RSS from /proc, /healthz over
 * HTTP, what reaches the Slack thread, what the API server was asked).
 * Used by test/integration/hostile-cluster.test.ts and bench/hostile.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolloutManifest, type CanaryStep } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { startStandInCluster, type StandInCluster } from '../../sandbox/kube/stand-in.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { CI_TOKEN, dropPrefix, INGEST_TOKEN, DEV_TOKEN, READ_TOKEN, uniquePrefix } from './glidepath.js';
import { USERS } from '../kube/support.js';

const CHILD = fileURLToPath(new URL('../fixtures/glidepath-child.ts', import.meta.url));
const BOT_TOKEN = 'xoxb-hostile-world';
export const HOSTILE_CHANNEL = 'C0HOSTILE';
/** The labels the stage selects; noise objects carry others. */
export const SELECTED_LABELS = { 'app.kubernetes.io/part-of': 'shop', env: 'prod' };
/** A canary that stops at an indefinite pause: a new version is a new release thread, and an abort has something to abort. */
const STEPS: CanaryStep[] = [{ setWeight: 20 }, { pause: {} }];

export interface HostileWorldOptions {
  /** The child's V8 heap limit (--max-old-space-size), MiB. */
  maxOldSpaceMb?: number;
  /** The child's LOG_LEVEL (its output is inherited only when HOSTILE_CHILD_LOG=1). */
  logLevel?: string;
}

export interface Health {
  status: number | 'timeout' | 'error';
  ms: number;
}

export interface HostileWorld {
  cluster: StandInCluster;
  clock: FakeClock;
  slack: SlackStandIn;
  /** The Glidepath child now (replaced by restart()). */
  readonly child: ChildProcess;
  readonly url: string;
  /** How many times the child had died and was started again. */
  readonly restarts: number;
  alive(): boolean;
  /** VmRSS of the child now, MiB (0 once it is gone). */
  rssMb(): number;
  /** VmHWM: the child's peak RSS since it started, MiB. */
  peakRssMb(): number;
  /** GET /healthz with a hang guard; never throws. */
  healthz(timeoutMs?: number): Promise<Health>;
  /** LIST and WATCH requests the API server has received so far (every resource). */
  listWatchRequests(): number;
  /** A new version of the `checkout` Rollout, made in the stand-in store (and the simulator run a little). */
  deploy(version: string): Promise<void>;
  /** Resolves true once the Slack channel shows `version` anywhere (a thread's parent or a reply), false after timeoutMs. */
  reachesSlack(version: string, timeoutMs: number): Promise<boolean>;
  /** Everything Slack shows in the channel, as one string (parents, edits, replies). */
  slackText(): string;
  /**
   * Resolves once the Rollouts watch now open has been open longer than the watch loop's healthy
   * time (5 s): its backoff from an earlier attack is forgotten, so each attack is judged alone.
   */
  settled(): Promise<void>;
  /** Starts a fresh child on the same Redis prefix if the last one died (so later attacks are measured at all). */
  ensureAlive(): Promise<boolean>;
  close(): Promise<void>;
}

export function readStatusMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  if (!pid) return 0;
  try {
    const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 102.4) / 10;
  } catch {
    return 0;
  }
}

/** Samples a child's VmRSS every `everyMs` until stopped: the peak during one attack, not since start. */
export function sampleRss(world: HostileWorld, everyMs = 100): { stop(): number } {
  let peak = world.rssMb();
  const timer = setInterval(() => (peak = Math.max(peak, world.rssMb())), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, world.rssMb());
    },
  };
}

/** Polls /healthz every `everyMs` (one request at a time) until stopped: the latencies seen during an attack. */
export function pollHealth(world: HostileWorld, everyMs = 100): { stop(): Promise<Health[]> } {
  const seen: Health[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      seen.push(await world.healthz(5_000));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return seen;
    },
  };
}

/** The p-th percentile (0–100) of the latencies of answered requests; a timeout or an error counts as its hang guard's time. */
export function percentileMs(samples: readonly Health[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = samples.map((s) => s.ms).sort((x, y) => x - y);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

function startChild(env: Record<string, string>, maxOldSpaceMb: number): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(CHILD, [], {
    execArgv: ['--import', 'tsx', `--max-old-space-size=${maxOldSpaceMb}`],
    env: { ...process.env, ...env },
    stdio: process.env.HOSTILE_CHILD_LOG === '1' ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, url: (m as { url: string }).url }));
    child.once('exit', (code, signal) => reject(new Error(`the Glidepath child exited with ${code ?? signal} before it listened`)));
  });
}

export async function startHostileWorld(o: HostileWorldOptions = {}): Promise<HostileWorld> {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const cluster = await startStandInCluster({ name: 'prod', users: USERS, clock, namespaces: ['shop', 'argocd'], controllers: { rollouts: { podReadyMs: 1_000 } } });
  const slack = await startSlackStandIn({ botToken: BOT_TOKEN });
  // When the Rollouts watch now open was asked for (settled(): has it lived past the backoff reset?).
  let lastRolloutsWatchAt = 0;
  const served = cluster.server.onRequest;
  cluster.server.onRequest = (request) => {
    if (request.verb === 'watch' && request.resource === 'rollouts') lastRolloutsWatchAt = Date.now();
    served?.(request);
  };
  const dir = mkdtempSync(join(tmpdir(), 'glidepath-hostile-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    `
settings: { watchLeaseSeconds: 15, watchResyncMinutes: 10 }
clusters:
  - { name: prod, kubeconfigPath: ${cluster.kubeconfigPath}, kubeconfigContext: prod, facts: watch }
pipelines:
  - name: shop
    channel: ${HOSTILE_CHANNEL}
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=prod" } }
`,
  );
  const prefix = uniquePrefix();
  const env: Record<string, string> = {
    PORT: '0',
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_PREFIX: prefix,
    INGEST_TOKENS: `prod=${INGEST_TOKEN},dev=${DEV_TOKEN}`,
    CI_TOKENS: `checkout=${CI_TOKEN}`,
    API_READ_TOKEN: READ_TOKEN,
    LOG_LEVEL: o.logLevel ?? 'warn',
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'hostile-world-signing-secret',
    SLACK_API_URL: slack.apiUrl,
    GLIDEPATH_CONFIG: configPath,
  };
  const heap = o.maxOldSpaceMb ?? 256;
  let current = await startChild(env, heap);
  let restarts = 0;
  const rt = () => cluster.store.registry.byKind('Rollout');
  const slackText = () => JSON.stringify(slack.transcript.messages(HOSTILE_CHANNEL));
  const alive = () => current.child.exitCode === null && current.child.signalCode === null;

  const world: HostileWorld = {
    cluster,
    clock,
    slack,
    get child() {
      return current.child;
    },
    get url() {
      return current.url;
    },
    get restarts() {
      return restarts;
    },
    alive,
    rssMb: () => (alive() ? readStatusMb(current.child.pid, 'VmRSS') : 0),
    peakRssMb: () => (alive() ? readStatusMb(current.child.pid, 'VmHWM') : 0),
    async healthz(timeoutMs = 5_000) {
      const started = performance.now();
      try {
        const res = await fetch(`${current.url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
        await res.arrayBuffer();
        return { status: res.status, ms: performance.now() - started };
      } catch (err) {
        return { status: (err as Error).name === 'TimeoutError' ? 'timeout' : 'error', ms: performance.now() - started };
      }
    },
    async settled() {
      const healthyMs = 5_000;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline && !(lastRolloutsWatchAt > 0 && Date.now() - lastRolloutsWatchAt > healthyMs + 500)) await new Promise((r) => setTimeout(r, 100));
    },
    listWatchRequests() {
      let n = 0;
      for (const [key, count] of cluster.server.requestCounts) if (key.startsWith('list ') || key.startsWith('watch ')) n += count;
      return n;
    },
    async deploy(version) {
      const image = `registry.example.com/shop/checkout:${version}`;
      const annotations = { 'hangar.io/release-id': `rel-${version}` };
      if (!cluster.store.tryGet(rt(), 'shop', 'checkout')) {
        cluster.store.create(rt(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image, replicas: 2, steps: STEPS, labels: SELECTED_LABELS, annotations }));
      } else {
        cluster.store.mutate(rt(), 'shop', 'checkout', (r) => {
          r.spec.template.spec.containers[0].image = image;
          r.metadata.annotations = { ...r.metadata.annotations, ...annotations };
        });
      }
      // The simulator's clock: pods get ready and the canary reaches its pause.
      for (let t = 0; t < 3_000; t += 500) await clock.advance(500);
    },
    async reachesSlack(version, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (slackText().includes(version)) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    },
    slackText,
    async ensureAlive() {
      if (alive()) return true;
      restarts += 1;
      current = await startChild(env, heap);
      return false;
    },
    async close() {
      cluster.server.hostile = undefined;
      if (alive()) {
        const exited = new Promise((r) => current.child.once('exit', r));
        current.child.kill('SIGTERM');
        const force = setTimeout(() => current.child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(force);
      }
      await cluster.stop();
      await slack.close();
      await dropPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}
