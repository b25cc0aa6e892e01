/**
 * npm run bench:ingest — realistic Rollouts facts over loopback through the real server, queue
 * and reducer (ingest and workers in two processes), against bare BullMQ add + no-op worker in
 * the same layout, on the same Redis, in the same run.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { FACTS_QUEUE } from '../src/facts/fact-queue.js';
import { createKeys } from '../src/store/keys.js';
import { deleteKeysWithPrefix } from '../src/store/redis.js';
import { rolloutBody } from '../test/helpers/rollout-bodies.js';
import { untilDrained } from './lib/drain.js';
import { closedLoop, openLoop, percentile } from './lib/http-load.js';
import { loadAtStart, loadAverages } from './lib/load.js';
import { peakRssMb, schedStat, startChild, startNodeFlags, type Child } from './lib/processes.js';

const FACTS = Number(process.env.BENCH_FACTS ?? 20_000);
/**
 * Rounds of the closed loop, the bare baseline and Glidepath taking turns; the ratio is the
 * median of the rounds'. One baseline phase, then one Glidepath phase, half a minute apart, read
 * the machine's neighbours at two moments: on this shared 2-core machine the same code's
 * single-phase ratio ranged 0.59-0.98 in one morning (6 Dec 2026).
 */
const ROUNDS = Math.max(1, Number(process.env.BENCH_INGEST_ROUNDS ?? 3));
/**
 * Rounds run first and left out of the figures (BENCH_INGEST_WARMUP, default 1): both sides'
 * processes start cold, and Glidepath's first 20,000 facts also pay V8 optimising its parsers and
 * reducer (the first round read 0.36-0.78 where the next ones read 0.82-1.12, 6 Dec 2026). A
 * production process meets a busy day warm; the warm-up round is still printed.
 */
const WARMUP = Math.max(0, Number(process.env.BENCH_INGEST_WARMUP ?? 1));
/** Releases a round's facts move through (a new one every 20 states of each Rollout); the next round's start after them. */
const RELEASES_PER_ROUND = 1_000;
const CONCURRENCY = 64;
const OFFERED_RATE = 1_000;
const TOKEN = 'bench-token-0123456789abcdef';
// The processes under test run the compiled code, as `npm start` does (npm run bench:ingest builds it).
const ROLE = fileURLToPath(new URL('../dist/bench/ingest-roles.js', import.meta.url));
const STAGES = ['dev', 'staging', 'canary', 'prod'];
const ROLLOUTS_PER_STAGE = 25;
/** BENCH_CPU_PROF=<dir>: each Glidepath process writes a V8 CPU profile there (node --cpu-prof) when it stops. */
const PROFILE = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
/** Glidepath's processes run with `npm start`'s node flags, then BENCH_NODE_ARGS (a later flag wins). */
const GP_ARGS = [...startNodeFlags(), ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [])];

const CONFIG = `
clusters: [{ name: prod, inCluster: true }]
pipelines:
  - name: shop
    channel: C0BENCH
    stages:
${STAGES.map((s) => `      - { name: ${s}, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=${s}" } }`).join('\n')}
`;

/** 100 Rollouts, each moving through canary steps and a new release every 20 states. */
function facts(count: number, rvStart: number, releaseBase = 0): Buffer[] {
  const lastApplied = JSON.stringify({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', spec: { replicas: 5, template: { spec: { containers: [{ name: 'app', image: 'x', env: Array.from({ length: 20 }, (_, i) => ({ name: `VAR_${i}`, value: 'v'.repeat(40) })) }] } } } });
  const out: Buffer[] = [];
  const rollouts = STAGES.length * ROLLOUTS_PER_STAGE;
  for (let i = 0; i < count; i++) {
    const r = i % rollouts;
    const n = Math.floor(i / rollouts);
    const release = releaseBase + Math.floor(n / 20) + 1;
    const step = n % 20 < 7 ? n % 20 : 7;
    const env = STAGES[Math.floor(r / ROLLOUTS_PER_STAGE)] as string;
    const done = step >= 7;
    const body = rolloutBody({
      name: `svc-${r}`,
      uid: `uid-${r}`,
      generation: release * 2,
      rv: rvStart + i,
      releaseId: `rel-${release}`,
      image: `registry.example.com/shop/svc-${r % ROLLOUTS_PER_STAGE}:${release}.0.0`,
      podHash: `h${release}`,
      stableRS: done ? `h${release}` : `h${release - 1}`,
      step,
      phase: done ? 'Healthy' : step === 1 || step === 3 ? 'Paused' : 'Progressing',
      message: done ? undefined : step === 1 || step === 3 ? 'CanaryPauseStep' : 'more replicas need to be updated',
      labels: { 'app.kubernetes.io/part-of': 'shop', 'app.kubernetes.io/name': `svc-${r}`, env, 'hangar.io/release-tracked': 'true' },
      sentAt: 1_787_000_000 + i,
    });
    body.rollout.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = lastApplied;
    out.push(Buffer.from(JSON.stringify(body)));
  }
  return out;
}

type Tally = { commands: number; roundTrips: number; byCommand: Record<string, number>; cpuMs: number };
/** The commands each process sent since it was last asked (the ask starts its count again). */
const tallyOf = async (child: Child): Promise<Tally> => (await child.request('redis')).redis;
const perFact = (t: Tally, n: number) =>
  `CPU ${round((t.cpuMs * 1000) / n, 0)} µs, ${round(t.commands / n, 2)} commands (${round(t.roundTrips / n, 2)} round trips) per fact: ${Object.entries(t.byCommand).sort((a, b) => b[1] - a[1]).slice(0, 6).map(([c, k]) => `${c} ${round(k / n, 2)}`).join(', ')}`;

/**
 * What Redis itself spent, per fact, by command (INFO commandstats, diffed): Lua scripts count
 * once as evalsha and again for every command they call. The Redis is shared, so other clients'
 * commands are in the diff too; the client-side counts above are this run's alone.
 */
async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) out.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}
function statsPerFact(before: Map<string, { calls: number; usec: number }>, after: Map<string, { calls: number; usec: number }>, n: number): string {
  const diff = [...after].map(([name, a]) => ({ name, calls: a.calls - (before.get(name)?.calls ?? 0), usec: a.usec - (before.get(name)?.usec ?? 0) })).filter((d) => d.calls > 0 && d.name !== 'info');
  const usec = diff.reduce((s, d) => s + d.usec, 0);
  const top = diff.sort((a, b) => b.usec - a.usec).slice(0, 6).map((d) => `${d.name} ${round(d.calls / n, 2)}× ${round(d.usec / n, 1)} µs`);
  return `redis server: ${round(usec / n, 1)} µs per fact; ${top.join(', ')}`;
}

async function waitReduced(child: Child, target: number): Promise<void> {
  for (;;) {
    const { reduced } = await child.request('count');
    if (reduced >= target) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}


const cpuUs = (c: NodeJS.CpuUsage) => c.user + c.system;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const memoryMb = (m: NodeJS.MemoryUsage) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, round(v / 1_048_576)])) as Record<keyof NodeJS.MemoryUsage, number>;

async function main(): Promise<void> {
  const prefix = `{gp-bench-${randomBytes(4).toString('hex')}}`;
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const env = { REDIS_PREFIX: prefix, INGEST_TOKENS: `prod=${TOKEN}`, PORT: '0', LOG_LEVEL: 'silent', BENCH_CONFIG: CONFIG };
  const bodies = facts(FACTS, 1_000_000);
  const avgBytes = Math.round(bodies.reduce((s, b) => s + b.length, 0) / bodies.length);
  console.log(`ingest bench: ${FACTS} facts, ~${avgBytes} bytes each, ${CONCURRENCY} connections`);

  try {
    // Baseline: bare BullMQ, producer and no-op worker in two processes, same payloads.
    const bWorker = await startChild(ROLE, { ...env, BENCH_ROLE: 'baseline-worker' }, PROFILE);
    const bProducer = await startChild(ROLE, { ...env, BENCH_ROLE: 'baseline-producer' }, PROFILE);
    const payloads = bodies.map((b) => JSON.parse(b.toString()));
    // Glidepath: ingest process + workers process, started once; idle while the baseline runs.
    const workers = await startChild(ROLE, { ...env, BENCH_ROLE: 'workers' }, [...GP_ARGS, ...PROFILE]);
    const ingest = await startChild(ROLE, { ...env, BENCH_ROLE: 'ingest' }, ['--expose-gc', ...GP_ARGS, ...PROFILE]);
    const url = `${ingest.hello.url}/v1/facts/rollouts`;
    // Idle heap matters beyond itself: V8 lets the heap grow to a few times what is live before a
    // full collection, so what a process holds at rest (loaded modules) multiplies its peak under load.
    const idle = memoryMb((await ingest.request('memory')).memory);
    console.log(`ingest at rest (after a full collection): heap used ${idle.heapUsed} MB, external ${idle.external} MB, array buffers ${idle.arrayBuffers} MB, rss ${idle.rss} MB`);
    const factsQueue = new Queue(FACTS_QUEUE, { connection: redis, prefix: createKeys(prefix).factQueuePrefix(0) });

    const rounds: { baselineJobsPerSec: number; e2eFactsPerSec: number; p99: number }[] = [];
    let generatorCpuUs = 0;
    for (let r = 0; r < WARMUP + ROUNDS; r++) {
      const last = r === WARMUP + ROUNDS - 1;
      const name = r < WARMUP ? `warm-up ${r + 1} of ${WARMUP} (not counted)` : `round ${r - WARMUP + 1} of ${ROUNDS}`;
      await tallyOf(bWorker);
      await tallyOf(bProducer);
      let stats = await commandStats(redis);
      const bStart = performance.now();
      const produced = await bProducer.request({ payloads, concurrency: CONCURRENCY, round: r });
      await waitReduced(bWorker, FACTS * (r + 1));
      const baselineJobsPerSec = FACTS / ((performance.now() - bStart) / 1000);
      console.log(`${name}, baseline: ${round(FACTS / (produced.elapsedMs / 1000), 0)} adds/s, ${round(baselineJobsPerSec, 0)} jobs/s end to end`);
      if (last) {
        console.log(`  producer: ${perFact(await tallyOf(bProducer), FACTS)}`);
        console.log(`  worker: ${perFact(await tallyOf(bWorker), FACTS)}`);
        console.log(`  ${statsPerFact(stats, await commandStats(redis), FACTS)}`);
      }

      // Each round's facts move the Rollouts through releases of their own: new observations, not repeats.
      const roundBodies = r === 0 ? bodies : facts(FACTS, 1_000_000 + r * FACTS, r * RELEASES_PER_ROUND);
      await tallyOf(ingest);
      await tallyOf(workers);
      stats = await commandStats(redis);
      const start = performance.now();
      const generatorCpu = process.cpuUsage();
      const load = await closedLoop(url, roundBodies, TOKEN, CONCURRENCY);
      generatorCpuUs += cpuUs(process.cpuUsage(generatorCpu)) / FACTS;
      await waitReduced(workers, FACTS * (r + 1));
      const e2eFactsPerSec = FACTS / ((performance.now() - start) / 1000);
      const accepted = load.statuses.get(202) ?? 0;
      if (accepted !== FACTS) throw new Error(`only ${accepted} of ${FACTS} accepted: ${JSON.stringify([...load.statuses])}`);
      const p99 = percentile(load.latenciesMs, 99);
      if (r >= WARMUP) rounds.push({ baselineJobsPerSec, e2eFactsPerSec, p99 });
      console.log(`${name}, glidepath: ${round(FACTS / (load.elapsedMs / 1000), 0)} accepted/s, ${round(e2eFactsPerSec, 0)} reduced/s end to end; accept p50 ${round(percentile(load.latenciesMs, 50), 2)} ms, p99 ${round(p99, 2)} ms (closed loop, ${CONCURRENCY} connections; ${load.refused} answers 503 behind, sent again after Retry-After); ratio ${round(e2eFactsPerSec / baselineJobsPerSec, 2)}`);
      if (last) {
        console.log(`  load generator (this process, on the same cores): CPU ${round(generatorCpuUs / (WARMUP + ROUNDS), 0)} µs per fact (a 503 sent again is in it)`);
        console.log(`  ingest: ${perFact(await tallyOf(ingest), FACTS)}`);
        console.log(`  workers: ${perFact(await tallyOf(workers), FACTS)}`);
        console.log(`  ${statsPerFact(stats, await commandStats(redis), FACTS)}`);
      }
      // The facts Glidepath queued itself meanwhile (superseded) are reduced before the next phase starts.
      await untilDrained(factsQueue, `${name}: the closed loop and the facts it made`, 60_000);
    }
    await factsQueue.close();
    await bProducer.stop();
    await bWorker.stop();
    const ratios = rounds.map((x) => x.e2eFactsPerSec / x.baselineJobsPerSec);
    const ratio = percentile(ratios, 50);
    const baselineJobsPerSec = percentile(rounds.map((x) => x.baselineJobsPerSec), 50);
    const e2eFactsPerSec = percentile(rounds.map((x) => x.e2eFactsPerSec), 50);

    // Latency at a steady offered load, once the facts Glidepath queued itself meanwhile (superseded) are reduced too.
    const steady = facts(Math.min(FACTS, 5_000), 5_000_000, (WARMUP + ROUNDS) * RELEASES_PER_ROUND);
    await ingest.request('loop');
    await workers.request('loop');
    const pids = { ingest: ingest.process.pid, workers: workers.process.pid, 'load generator': process.pid };
    const scheduledBefore = Object.values(pids).map(schedStat);
    const open = await openLoop(url, steady, TOKEN, OFFERED_RATE);
    const scheduled = Object.entries(pids).map(([name, pid], i) => {
      const [now, before] = [schedStat(pid), scheduledBefore[i] ?? { ranMs: 0, waitedMs: 0 }];
      return `${name} ran ${round(now.ranMs - before.ranMs, 0)} ms, waited ${round(now.waitedMs - before.waitedMs, 0)} ms for a core`;
    });
    const loops = { ingest: (await ingest.request('loop')).loop, workers: (await workers.request('loop')).loop };
    const openAccepted = open.statuses.get(202) ?? 0;
    await waitReduced(workers, FACTS * (WARMUP + ROUNDS) + openAccepted);
    const p50 = percentile(open.latenciesMs, 50);
    const p99 = percentile(open.latenciesMs, 99);
    if (openAccepted !== steady.length) console.log(`  at ${OFFERED_RATE}/s: only ${openAccepted} of ${steady.length} accepted: ${JSON.stringify([...open.statuses])}`);
    console.log(`at ${OFFERED_RATE} facts/s offered: accept p50 ${round(p50, 2)} ms, p99 ${round(p99, 2)} ms, max ${round(percentile(open.latenciesMs, 100), 1)} ms`);
    type Pauses = { count: number; totalMs: number; maxMs: number };
    const kinds = (byKind: Record<string, Pauses>) =>
      Object.entries(byKind).map(([kind, k]) => `${kind} ${k.count}× ${round(k.totalMs)} ms, longest ${round(k.maxMs, 1)}`).join('; ');
    const delay = (d: { p50: number; p99: number; max: number; gc: Pauses & { byKind: Record<string, Pauses> } }) =>
      `p50 ${round(d.p50, 1)} ms, p99 ${round(d.p99, 1)} ms, max ${round(d.max, 1)} ms (GC pauses: ${d.gc.count}, ${round(d.gc.totalMs)} ms in all, longest ${round(d.gc.maxMs, 1)} ms: ${kinds(d.gc.byKind)})`;
    console.log(`  event-loop delay meanwhile: ingest ${delay(loops.ingest)}; workers ${delay(loops.workers)}`);
    // Each process's main thread: time on a core, and time runnable but waiting for one (/proc/<pid>/schedstat).
    console.log(`  main threads meanwhile: ${scheduled.join('; ')}`);
    console.log(`  per fact meanwhile: ingest ${perFact(await tallyOf(ingest), steady.length)}; workers ${perFact(await tallyOf(workers), steady.length)}`);

    const rss = { ingest: peakRssMb(ingest.process.pid), workers: peakRssMb(workers.process.pid) };
    console.log(`peak RSS: ingest ${rss.ingest} MB, workers ${rss.workers} MB`);
    const asked = await ingest.request('memory');
    const after = memoryMb(asked.memory);
    const peaks = (peak: NodeJS.MemoryUsage) => Object.entries(memoryMb(peak)).map(([k, v]) => `${k} ${v} MB`).join(', ');
    console.log(`peaks while loaded (sampled every 50 ms): ingest ${peaks(asked.peak)}; workers ${peaks((await workers.request('memory')).peak)}`);
    console.log(`ingest after the load (after a full collection): heap used ${after.heapUsed} of ${after.heapTotal} MB, external ${after.external} MB, array buffers ${after.arrayBuffers} MB`);
    await ingest.stop();
    await workers.stop();

    console.log(`ratio (glidepath end to end / bare BullMQ end to end): ${round(ratio, 2)}, the median of ${ROUNDS} rounds (${ratios.map((x) => round(x, 2)).join(', ')})`);
    console.log(
      JSON.stringify({
        bench: 'ingest',
        facts: FACTS,
        e2eFactsPerSec: round(e2eFactsPerSec, 0),
        baselineJobsPerSec: round(baselineJobsPerSec, 0),
        ratio: round(ratio, 2),
        ratios: ratios.map((x) => round(x, 2)),
        p99AcceptClosedLoopMs: round(percentile(rounds.map((x) => x.p99), 50), 1),
        p50AcceptMs: round(p50, 2),
        p99AcceptMs: round(p99, 2),
        peakRssMb: Math.max(rss.ingest, rss.workers),
        ingestPeakRssMb: rss.ingest,
        workersPeakRssMb: rss.workers,
        ingestIdleHeapMb: idle.heapUsed,
        generatorCpuUsPerFact: round(generatorCpuUs / (WARMUP + ROUNDS), 0),
        warmupRounds: WARMUP,
        loadStart: loadAtStart,
        loadEnd: loadAverages(),
      }),
    );
  } finally {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
