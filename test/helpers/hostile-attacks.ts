/**
 * Issue 20's cluster-side attacks, each played by the stand-in API server's `hostile` hook on a
 * HostileWorld and then taken away again (so what follows measures recovery, not the attack):
 *   a. a Rollouts watch that sends 72 MiB without a newline;
 *   b. 410 Expired on every watch, for a window (a compaction storm);
 *   c. a Rollouts LIST that ignores labelSelector: 20,000 unselected Rollouts beside the real one;
 *   d. a Rollout aborted with a 40 KB status.message (a real store write, no hook);
 *   e. a Secret on the Rollouts watch.
 * Each returns what it did and how many LIST+WATCH requests the server saw meanwhile.
 * Shared by test/integration/hostile-cluster.test.ts and bench/hostile.ts.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { percentileMs, pollHealth, sampleRss, SELECTED_LABELS, type Health, type HostileWorld } from './hostile-world.js';

export interface AttackRun {
  /** From the hook going in to it coming out (or, for d, to the write). */
  durationMs: number;
  /** LIST+WATCH requests the API server received meanwhile. */
  requests: number;
  requestsPerSec: number;
  detail: Record<string, unknown>;
}

export interface Attack {
  id: 'a' | 'b' | 'c' | 'd' | 'e';
  name: string;
  run(world: HostileWorld): Promise<AttackRun>;
}

const MiB = 1024 * 1024;
export const LONG_LINE_BYTES = 72 * MiB;
/**
 * Long enough for the backoff to show: each watched scope (the world watches two) retries at
 * 0.25-0.5, 0.5-1, 1-2, 2-4, 4-8 s…, so in 10 s two scopes make 18-22 LIST+WATCH requests, right
 * at the 2 a second the test allows; in 15 s it is 1.3-1.6 a second, and falling.
 */
export const GONE_WINDOW_MS = 15_000;
export const UNSELECTED_OBJECTS = 20_000;
export const LONG_MESSAGE_CHARS = 40_000;
/** In the abort message's first words, so a cut message still shows it (if a reply ever quotes it). */
export const ABORT_MARKER = 'HOSTILE-ABORT-MARKER';
/** What the abort's reply says (src/slack/render/reply.ts); with a short message it is there (the bench's baseline). */
export const ABORT_REPLY = 'was aborted';
export const SECRET_NAME = 'hostile-db-credentials';
export const SECRET_VALUE = 'aHVudGVyMg-hostile-secret-value';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

async function untilAsync(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** The child's count of watched objects refused as no valid fact (its /metrics; no METRICS_TOKEN in this world). */
async function invalidObjectsRefused(world: HostileWorld): Promise<number> {
  try {
    const text = await (await fetch(`${world.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const line = text.split('\n').find((l) => l.startsWith('glidepath_facts_rejected_total{') && l.includes('source="watch"') && l.includes('reason="invalid_object"'));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  } catch {
    // Unreadable: NaN compares false, so a refusal is never claimed on a count not read.
    return Number.NaN;
  }
}

/** Runs `body` between two reads of the server's LIST+WATCH count. */
async function measured(world: HostileWorld, body: () => Promise<Record<string, unknown>>): Promise<AttackRun> {
  const before = world.listWatchRequests();
  const started = performance.now();
  let detail: Record<string, unknown>;
  try {
    detail = await body();
  } finally {
    world.cluster.server.hostile = undefined;
  }
  const durationMs = performance.now() - started;
  const requests = world.listWatchRequests() - before;
  return { durationMs, requests, requestsPerSec: requests / Math.max(durationMs / 1000, 0.001), detail };
}

function watchHeaders(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
}

/** Writes `total` bytes of one JSON line that never ends, honouring backpressure; stops when the client hangs up. */
async function endlessLine(res: ServerResponse, total: number): Promise<{ bytes: number; clientClosed: boolean }> {
  watchHeaders(res);
  let clientClosed = false;
  res.once('close', () => (clientClosed = true));
  const head = Buffer.from('{"type":"ADDED","object":{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","metadata":{"name":"');
  const chunk = Buffer.alloc(MiB, 'x');
  let bytes = 0;
  res.write(head);
  bytes += head.length;
  while (bytes < total && !clientClosed) {
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
    bytes += chunk.length;
  }
  if (!clientClosed) res.end();
  return { bytes, clientClosed };
}

const expired = JSON.stringify({
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version (hostile stand-in)', reason: 'Expired', code: 410 },
});

function answerGone(res: ServerResponse): void {
  watchHeaders(res);
  res.end(`${expired}\n`);
}

let noise: string | undefined;
/** The 20,000 Rollouts no stage selects, as JSON array items (built once: ~30 MB). */
function noiseItems(): string {
  if (noise) return noise;
  const items: string[] = [];
  for (let i = 0; i < UNSELECTED_OBJECTS; i += 1) {
    const o: KubeObject = rolloutManifest({
      namespace: 'shop',
      name: `noise-${i}`,
      image: `registry.example.com/other/noise-${i}:1.0.${i}`,
      labels: { 'app.kubernetes.io/part-of': 'other', env: 'prod' },
      annotations: { 'hangar.io/release-id': `noise-rel-${i}` },
    });
    o.metadata = { ...o.metadata, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: '1', generation: 1, creationTimestamp: '2026-08-20T08:00:00Z' };
    o.status = { phase: 'Healthy', currentPodHash: `h${i}`, stableRS: `h${i}`, observedGeneration: '1', replicas: 5, availableReplicas: 5, updatedReplicas: 5 };
    items.push(JSON.stringify(o));
  }
  return (noise = items.join(','));
}

/**
 * d: the Rollout aborted as the controller writes it (condition, then phase and message from it,
 * in one write), with a message of `chars` characters; the bench's baseline aborts with a short one.
 */
export function abortAttack(chars: number): Attack {
  return {
    id: 'd',
    name: `abort with a ${chars >= 1000 ? `${chars / 1000} KB` : `${chars}-character`} status.message`,
    run: (world) =>
      measured(world, async () => {
        const { store } = world.cluster;
        const rt = store.registry.byKind('Rollout');
        const why = `Rollout aborted update to revision 9: ${ABORT_MARKER} ${'metric "error-rate" assessed Failed: 0.73 > 0.05; '.repeat(Math.ceil(chars / 50))}`.slice(0, chars);
        store.mutate(rt, 'shop', 'checkout', (r) => {
          const status = (r.status ??= {}) as Record<string, unknown>;
          const conditions = ((status.conditions as Record<string, unknown>[] | undefined) ?? []).filter((c) => c.type !== 'Progressing');
          const at = new Date(world.clock.now()).toISOString();
          conditions.push({ type: 'Progressing', status: 'False', reason: 'RolloutAborted', message: why, lastUpdateTime: at, lastTransitionTime: at });
          Object.assign(status, { abort: true, abortedAt: at, conditions, phase: 'Degraded', message: `RolloutAborted: ${why}`, currentStepIndex: 0 });
          delete status.pauseConditions;
          delete status.controllerPause;
        }, { subresource: 'status' });
        return { messageChars: why.length };
      }),
  };
}

export const ATTACKS: readonly Attack[] = [
  {
    id: 'a',
    name: 'watch line of 72 MiB without a newline',
    run: (world) =>
      measured(world, async () => {
        let sent: Promise<{ bytes: number; clientClosed: boolean }> | undefined;
        world.cluster.server.hostile = (req, { res, watch }) => {
          if (!watch || req.resource !== 'rollouts' || sent) return false;
          sent = endlessLine(res, LONG_LINE_BYTES);
          return true;
        };
        // End the watch in hand: the resume is the one that gets the endless line.
        world.cluster.server.dropWatches();
        const resumed = await until(() => sent !== undefined, 15_000);
        const result = sent ? await sent : { bytes: 0, clientClosed: false };
        return { resumed, ...result };
      }),
  },
  {
    id: 'b',
    name: `410 on every watch for ${GONE_WINDOW_MS / 1000} s`,
    run: (world) =>
      measured(world, async () => {
        let refused = 0;
        world.cluster.server.hostile = (_req, { res, watch }) => {
          if (!watch) return false;
          refused += 1;
          answerGone(res);
          return true;
        };
        world.cluster.server.dropWatches();
        await sleep(GONE_WINDOW_MS);
        return { refusedWatches: refused };
      }),
  },
  {
    id: 'c',
    name: `LIST ignoring labelSelector: ${UNSELECTED_OBJECTS} unselected Rollouts`,
    run: (world) => {
      const items = noiseItems();
      return measured(world, async () => {
        const { store } = world.cluster;
        const rt = store.registry.byKind('Rollout');
        let goneSent = false;
        let listServed: Promise<number> | undefined;
        world.cluster.server.hostile = (req, { res, watch }) => {
          if (req.resource !== 'rollouts') return false;
          // One 410 on the resume makes the client list again; that list is the hostile one.
          if (watch) {
            if (goneSent) return false;
            goneSent = true;
            answerGone(res);
            return true;
          }
          if (req.verb !== 'list' || listServed) return false;
          const real = store.list(rt, 'shop', { labelSelector: req.labelSelector });
          const body = `{"kind":"RolloutList","apiVersion":"argoproj.io/v1alpha1","metadata":{"resourceVersion":"${real.resourceVersion}"},"items":[${[...real.items.map((o) => JSON.stringify(o)), items].join(',')}]}`;
          listServed = new Promise((resolve) => {
            res.once('close', () => resolve(Buffer.byteLength(body)));
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(body);
          });
          return true;
        };
        world.cluster.server.dropWatches();
        const listed = await until(() => listServed !== undefined, 20_000);
        const listBytes = listServed ? await listServed : 0;
        return { listed, listBytes };
      });
    },
  },
  abortAttack(LONG_MESSAGE_CHARS),
  {
    id: 'e',
    name: 'a Secret on the Rollouts watch',
    run: (world) =>
      measured(world, async () => {
        let served = false;
        world.cluster.server.hostile = (req, { res, watch }) => {
          if (!watch || req.resource !== 'rollouts' || served) return false;
          served = true;
          // Labelled as the stage selects and at the store's version, so the client resumes from it as from any event.
          const secret = {
            kind: 'Secret',
            apiVersion: 'v1',
            metadata: { name: SECRET_NAME, namespace: 'shop', uid: '5ec7e700-0000-4000-8000-000000000001', resourceVersion: world.cluster.store.resourceVersion(), labels: SELECTED_LABELS, annotations: { 'hangar.io/release-id': 'rel-secret' } },
            type: 'Opaque',
            data: { password: Buffer.from(SECRET_VALUE).toString('base64') },
            stringData: { password: SECRET_VALUE },
          };
          watchHeaders(res);
          res.end(`${JSON.stringify({ type: 'ADDED', object: secret })}\n`);
          return true;
        };
        const refusedBefore = await invalidObjectsRefused(world);
        world.cluster.server.dropWatches();
        const resumed = await until(() => served, 15_000);
        // Waited for the refusal itself: the client read the Secret and counted it out.
        const refused = resumed && (await untilAsync(async () => (await invalidObjectsRefused(world)) > refusedBefore, 15_000));
        return { served: resumed, refused };
      }),
  },
];

/**
 * The same moves with a well-behaved server, for the bench's same-run baseline: the watch in hand
 * is ended as before (a, c, e: and resumed normally), the same 10 s window passes (b), the Rollout
 * is aborted with a short message (d).
 */
export function wellBehaved(id: Attack['id']): Attack {
  if (id === 'd') return { ...abortAttack(200), name: 'baseline: abort with a 200-character message' };
  return {
    id,
    name: id === 'b' ? 'baseline: the same window, no 410' : 'baseline: the watch ends and resumes',
    run: (world) =>
      measured(world, async () => {
        const before = world.listWatchRequests();
        world.cluster.server.dropWatches();
        if (id === 'b') await sleep(GONE_WINDOW_MS);
        const resumed = await until(() => world.listWatchRequests() > before, 15_000);
        await sleep(500);
        return { resumed };
      }),
  };
}

export interface AttackReport {
  attack: string;
  name: string;
  /** The child was dead before the attack (an earlier one killed it) and was started again. */
  restartedBefore: boolean;
  alive: boolean;
  /** The child's exit, if it died. */
  exit?: string;
  healthz: Health['status'];
  healthzMs: number;
  /** /healthz polled during the attack and the recovery. */
  healthzP50Ms: number;
  healthzP99Ms: number;
  healthzFailures: number;
  /** VmRSS sampled during the attack and the recovery, MiB. */
  peakRssMb: number;
  /** VmHWM after: the peak since the child started, MiB. */
  hwmMb: number;
  requests: number;
  requestsPerSec: number;
  /** The next good event (a new version of the Rollout) showed in Slack. */
  nextEventInSlack: boolean;
  nextEventMs: number;
  durationMs: number;
  detail: Record<string, unknown>;
}

/**
 * One attack and the recovery after it, measured from outside: RSS and /healthz sampled all the
 * while, then (the hook gone) a new version of the Rollout written to the store and looked for in
 * Slack. `before` runs after the attack, before the next good event (the abort's own reply, say).
 */
/** For `playAttack`'s `before`: waits until Slack shows one more abort reply than it did at the start. */
export function abortReplyArrives(world: HostileWorld, timeoutMs = 20_000): () => Promise<Record<string, unknown>> {
  const count = () => world.slackText().split(ABORT_REPLY).length - 1;
  const before = count();
  return async () => {
    const deadline = Date.now() + timeoutMs;
    while (count() <= before && Date.now() < deadline) await sleep(100);
    return { abortInSlack: count() > before };
  };
}

export async function playAttack(
  world: HostileWorld,
  attack: Attack,
  version: string,
  o: { nextEventTimeoutMs?: number; before?: () => Promise<Record<string, unknown>> } = {},
): Promise<AttackReport> {
  const restartedBefore = !(await world.ensureAlive());
  await world.settled();
  const rss = sampleRss(world);
  const health = pollHealth(world);
  const run = await attack.run(world);
  const extra = (await o.before?.()) ?? {};
  const healthz = await world.healthz(5_000);
  const started = performance.now();
  let nextEventInSlack = false;
  if (world.alive()) {
    await world.deploy(version);
    nextEventInSlack = await world.reachesSlack(version, o.nextEventTimeoutMs ?? 30_000);
  }
  const nextEventMs = performance.now() - started;
  const samples = await health.stop();
  const peakRssMb = rss.stop();
  const { child } = world;
  return {
    attack: attack.id,
    name: attack.name,
    restartedBefore,
    alive: world.alive(),
    ...(world.alive() ? {} : { exit: `code ${child.exitCode} signal ${child.signalCode}` }),
    healthz: healthz.status,
    healthzMs: Math.round(healthz.ms),
    healthzP50Ms: percentileMs(samples, 50),
    healthzP99Ms: percentileMs(samples, 99),
    healthzFailures: samples.filter((s) => s.status !== 200).length,
    peakRssMb,
    hwmMb: world.peakRssMb(),
    requests: run.requests,
    requestsPerSec: Math.round(run.requestsPerSec * 100) / 100,
    nextEventInSlack,
    nextEventMs: Math.round(nextEventMs),
    durationMs: Math.round(run.durationMs),
    detail: { ...run.detail, ...extra },
  };
}
