/**
 * npm run bench:watch — 2,000 Rollouts and 2,000 Applications changing in the stand-in API server,
 * seen first by a bare client-node informer per watched scope (the baseline: the event rate the
 * API server and client-node deliver) and then by Glidepath's watch source started from the
 * composition root (`facts: watch`), from the watch to the reduced record. Both run in a child
 * process of their own, one after the other, on the same objects with the same label selectors
 * and the same number of changes, written at the same pace.
 *
 * A change is a status write to the store, timed by the resourceVersion it produced:
 *   baseline lag   = informer update event time − write time
 *   queued lag     = facts job.timestamp (added to the queue) − write time
 *   lag            = facts job.finishedOn (reduced) − write time
 * Rates are changes / (last event or reduction − first write).
 *
 * Knobs: BENCH_WATCH_OBJECTS (per kind, 2000), BENCH_WATCH_ROUNDS (changes of each object per
 * phase, 2), BENCH_WATCH_RATE (changes written per second, 0 = as fast as the store takes them),
 * BENCH_WATCH_PROFILE (a directory for a CPU profile of the Glidepath process), BENCH_WATCH_SPLIT=1
 * (the watch source in an ingest process and the reducer in a worker process, as replicas of
 * each role run; default one process with both roles), REDUCER_CONCURRENCY (the reducer's, as deployed).
 * The last line is one JSON object.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { factsOfJob, type FactJobData } from '../src/facts/fact-batches.js';
import { FACTS_QUEUE } from '../src/facts/fact-queue.js';
import type { WatchCounts } from '../src/facts/watch/watch-source.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { ADMIN_RULES } from '../sandbox/kube/auth.js';
import { startStandInCluster } from '../sandbox/kube/stand-in.js';
import { percentile } from './lib/http-load.js';
import { startChild, startNodeFlags, type Child } from './lib/processes.js';
import { BENCH_CLUSTER, createObjects, writeChange } from './watch-world.js';
import { loadAtStart, loadAverages } from './lib/load.js';

const OBJECTS = Number(process.env.BENCH_WATCH_OBJECTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_WATCH_ROUNDS ?? 2);
const RATE = Number(process.env.BENCH_WATCH_RATE ?? 1000);
const CHANGES = ROUNDS * 2 * OBJECTS;
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_WATCH_TIMEOUT_S ?? 120) * 1000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A directory to write a CPU profile of the Glidepath process into (where does the time go). */
const PROFILE_DIR = process.env.BENCH_WATCH_PROFILE;
const SPLIT = process.env.BENCH_WATCH_SPLIT === '1';
const CONSUMER = new URL('./watch-consumer.ts', import.meta.url).pathname;

const round = (n: number, d = 1): number => Math.round(n * 10 ** d) / 10 ** d;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = PHASE_TIMEOUT_MS): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(50);
  }
}

const standIn = await startStandInCluster({
  name: BENCH_CLUSTER,
  users: [{ name: 'admin', token: 'admin-token', rules: ADMIN_RULES }],
  namespaces: ['shop', 'argocd'],
  // Enough history that no watch resumes into a compacted version (a relist would be a bug here).
  historyLimit: 4 * OBJECTS + 2 * CHANGES + 1_000,
});
const { store } = standIn;
const kubeconfigPath = standIn.kubeconfigPath!;
let t = Date.now();
createObjects(store, OBJECTS);
console.log(`created ${OBJECTS} Rollouts and ${OBJECTS} Applications with status in ${Date.now() - t} ms; ${CHANGES} changes per phase at ${RATE || 'max'}/s`);

/** Writes changes [from, from + CHANGES) at RATE per second; the write time of each resourceVersion. */
async function writeChanges(from: number): Promise<{ writtenAt: Map<string, number>; first: number; last: number }> {
  const writtenAt = new Map<string, number>();
  const first = Date.now();
  let k = 0;
  while (k < CHANGES) {
    const due = RATE > 0 ? Math.min(CHANGES, Math.floor(((Date.now() - first) * RATE) / 1000) + 1) : Math.min(CHANGES, k + 200);
    for (; k < due; k++) {
      const rv = writeChange(store, OBJECTS, from + k);
      writtenAt.set(rv, Date.now());
    }
    // Let the API server's sockets drain between batches, as a real API server's would.
    await (RATE > 0 ? sleep(5) : new Promise((r) => setImmediate(r)));
  }
  return { writtenAt, first, last: Date.now() };
}

interface Lags {
  lags: number[];
  lastAt: number;
}

function lagsOf(pairs: Iterable<[string, number]>, writtenAt: Map<string, number>): Lags {
  const lags: number[] = [];
  let lastAt = 0;
  for (const [rv, at] of pairs) {
    const w = writtenAt.get(rv);
    if (w === undefined) continue;
    lags.push(at - w);
    lastAt = Math.max(lastAt, at);
  }
  return { lags, lastAt };
}

// Phase 1: the bare informer.
let child: Child | undefined = await startChild(CONSUMER, { BENCH_CONSUMER: 'informer', BENCH_KUBECONFIG: kubeconfigPath });
console.log(`baseline: informers synced (${child.hello.adds} objects listed)`);
let w = await writeChanges(0);
await until('the informer to see every change', async () => (await child!.request({ cmd: 'count' })).updates >= CHANGES);
const informerStats = (await child.request({ cmd: 'stats' })) as { adds: number; errors: number; updates: [string, number][] };
await child.stop();
child = undefined;
const base = lagsOf(informerStats.updates, w.writtenAt);
const baselineEventsPerSec = CHANGES / ((base.lastAt - w.first) / 1000);
const baselineLagP99Ms = percentile(base.lags, 99);
console.log(
  `baseline: ${informerStats.updates.length} update events for ${CHANGES} changes (written in ${w.last - w.first} ms); ${round(baselineEventsPerSec)} events/s; ` +
    `lag p50 ${percentile(base.lags, 50)} ms, p99 ${baselineLagP99Ms} ms, max ${percentile(base.lags, 100)} ms; informer errors ${informerStats.errors}`,
);

// Phase 2: Glidepath's watch source and reducer, from the composition root.
const prefix = `{bench-watch-${randomUUID().slice(0, 8)}}`;
const redis = connectRedis(REDIS_URL, 'worker');
const facts = new Queue<FactJobData>(FACTS_QUEUE, { connection: redis, prefix });
let result: Record<string, unknown> | undefined;
let worker: Child | undefined;
try {
  const glidepathEnv = { BENCH_CONSUMER: 'glidepath', BENCH_KUBECONFIG: kubeconfigPath, REDIS_PREFIX: prefix, REDIS_URL };
  // Glidepath's processes run with `npm start`'s node flags (its young generation, the collector's one helper), as production does.
  const nodeArgs = [...startNodeFlags(), ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [])];
  if (SPLIT) worker = await startChild(CONSUMER, { ...glidepathEnv, BENCH_ROLES: 'worker' }, nodeArgs);
  child = await startChild(CONSUMER, { ...glidepathEnv, BENCH_ROLES: SPLIT ? 'ingest' : 'ingest,worker' }, nodeArgs);
  // Facts in completed jobs (a job carries a batch of facts), each job counted once, read oldest
  // first from a little before the last read (jobs finished in the same ms may sort before it).
  let finishedFacts = 0;
  let completedRead = 0;
  const counted = new Set<string>();
  const settled = async (atLeast: number): Promise<boolean> => {
    const c = await facts.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed', 'prioritized');
    if ((c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) > 0) return false;
    for (const job of await facts.getJobs(['completed'], Math.max(0, completedRead - 64), -1, true)) {
      if (job.id === undefined || counted.has(job.id)) continue;
      counted.add(job.id);
      finishedFacts += factsOfJob(job).length;
    }
    completedRead = c.completed ?? 0;
    return finishedFacts + (c.failed ?? 0) >= atLeast;
  };
  t = Date.now();
  // The first list of every scope is a resync fact per object: wait until all of them are reduced.
  await until('the watch source to list and the reducer to reduce every object', () => settled(2 * OBJECTS));
  console.log(`glidepath${SPLIT ? ' (ingest and worker processes)' : ''}: lease held, ${2 * OBJECTS} listed objects reduced in ${Date.now() - t} ms`);
  const commandsOf = async (): Promise<Record<string, number>> => {
    const all: Record<string, number> = {};
    for (const c of [child!, worker].filter((c): c is Child => c !== undefined)) for (const [name, n] of Object.entries((await c.request({ cmd: 'commands' })) as Record<string, number>)) all[name] = (all[name] ?? 0) + n;
    return all;
  };
  const commandsBefore = await commandsOf();
  const already = finishedFacts + ((await facts.getJobCounts('failed')).failed ?? 0);
  w = await writeChanges(CHANGES);
  await until('Glidepath to reduce every change', () => settled(already + CHANGES));
  const commandsAfter = await commandsOf();
  const stats = (await child.request({ cmd: 'stats' })) as { counts: WatchCounts };
  const jobs = await facts.getJobs(['completed', 'failed'], 0, -1);
  const failed = (await facts.getJobCounts('failed')).failed ?? 0;
  const reducedPairs: [string, number][] = [];
  const queuedPairs: [string, number][] = [];
  for (const job of jobs) {
    for (const { fact: data } of factsOfJob(job)) {
      if (data.kind !== 'rollout' && data.kind !== 'application') continue;
      if (data.event !== 'watch') continue;
      const rv = data.kind === 'rollout' ? data.rollout.resourceVersion : data.application.resourceVersion;
      if (!rv) continue;
      // A batch is finished when its last fact is reduced: an upper bound of each fact's lag.
      if (job.finishedOn) reducedPairs.push([rv, job.finishedOn]);
      queuedPairs.push([rv, job.timestamp]);
    }
  }
  const reduced = lagsOf(reducedPairs, w.writtenAt);
  const queued = lagsOf(queuedPairs, w.writtenAt);
  const glidepathFactsPerSec = CHANGES / ((reduced.lastAt - w.first) / 1000);
  const queuedFactsPerSec = CHANGES / ((queued.lastAt - w.first) / 1000);
  const lagP99Ms = percentile(reduced.lags, 99);
  const queuedLagP99Ms = percentile(queued.lags, 99);
  // Every scope lists once at the start (the pipeline's two, and the tracked Applications of its Rollout stage).
  const relists = stats.counts.lists - stats.counts.scopes;
  console.log(
    `glidepath: ${reduced.lags.length} watch facts reduced for ${CHANGES} changes (written in ${w.last - w.first} ms), ${failed} failed; ${round(glidepathFactsPerSec)} facts/s; ` +
      `queued ${round(queuedFactsPerSec)}/s, lag to queued p50 ${percentile(queued.lags, 50)} ms p99 ${queuedLagP99Ms} ms; ` +
      `lag to reduced p50 ${percentile(reduced.lags, 50)} ms p99 ${lagP99Ms} ms max ${percentile(reduced.lags, 100)} ms; lists ${stats.counts.lists}, restarts ${stats.counts.restarts}`,
  );
  // Redis commands the Glidepath process(es) sent during the changes, per change (machine-independent).
  const commandDiff = Object.entries(commandsAfter).map(([name, n]) => [name, n - (commandsBefore[name] ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  const redisCommandsPerFact = round(commandDiff.reduce((sum, [, n]) => sum + n, 0) / CHANGES, 2);
  console.log(`redis commands per change ${redisCommandsPerFact}: ${commandDiff.map(([name, n]) => `${name} ${round(n / CHANGES, 2)}`).join(', ')}`);
  console.log(`load average ${loadAverages().join(' ')}`);
  result = {
    bench: 'watch',
    rollouts: OBJECTS,
    applications: OBJECTS,
    changes: CHANGES,
    writeRate: RATE || 'max',
    baselineEventsPerSec: round(baselineEventsPerSec),
    glidepathFactsPerSec: round(glidepathFactsPerSec),
    ratio: round(glidepathFactsPerSec / baselineEventsPerSec, 2),
    lagP99Ms,
    queuedLagP99Ms,
    baselineLagP99Ms,
    queuedFactsPerSec: round(queuedFactsPerSec),
    queuedRatio: round(queuedFactsPerSec / baselineEventsPerSec, 2),
    split: SPLIT,
    relists,
    redisCommandsPerFact,
    loadStart: loadAtStart,
    loadEnd: loadAverages(),
  };
} finally {
  await child?.stop();
  await worker?.stop();
  await facts.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
  await standIn.stop();
}
console.log(JSON.stringify(result));
process.exit(0);
