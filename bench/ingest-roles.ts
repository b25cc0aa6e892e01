/** The processes of the ingest benchmark: Glidepath ingest, Glidepath workers, and the bare BullMQ baseline. */
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { parseEnv } from '../src/config/env.js';
import { parseConfigFile } from '../src/config/file.js';
import { startGlidepath } from '../src/glidepath.js';
import { createLogger } from '../src/obs/logger.js';
import { createMetrics } from '../src/obs/metrics.js';
import { RedisCounter } from './lib/redis-count.js';

// Every command this process sends (BullMQ's included), so the bench can say commands per fact per process.
const counter = new RedisCounter().install();
let cpuFrom = process.cpuUsage();
/** 'redis' asks for the commands and round trips sent, by command, and the CPU used (ms), since the last ask. */
function redisTally(): { commands: number; roundTrips: number; byCommand: Record<string, number>; cpuMs: number } {
  const cpu = process.cpuUsage(cpuFrom);
  cpuFrom = process.cpuUsage();
  const out = { commands: 0, roundTrips: 0, byCommand: {} as Record<string, number>, cpuMs: (cpu.user + cpu.system) / 1000 };
  for (const t of counter.take().values()) {
    out.commands += t.commands;
    out.roundTrips += t.roundTrips;
    for (const [name, n] of t.byCommand) out.byCommand[name] = (out.byCommand[name] ?? 0) + n;
  }
  return out;
}

const role = process.env.BENCH_ROLE;
const env = parseEnv(process.env);
const config = parseConfigFile(process.env.BENCH_CONFIG ?? '');
const send = (m: unknown) => process.send?.(m);
/** The largest of each figure of process.memoryUsage(), sampled every 50 ms: what the peak RSS is made of. */
const peakMemory: Record<string, number> = {};
setInterval(() => {
  for (const [k, v] of Object.entries(process.memoryUsage())) peakMemory[k] = Math.max(peakMemory[k] ?? 0, v);
}, 50).unref();

/**
 * Facts the bench sent (Rollout webhooks) that were reduced. Not the facts Glidepath makes itself
 * (a release that supersedes another queues one per target it took over), which would end the
 * wait for the bench's own facts early.
 */
async function reducedTotal(metrics: ReturnType<typeof createMetrics>): Promise<number> {
  const json = await metrics.registry.getSingleMetric('glidepath_facts_reduced_total')?.get();
  return (json?.values ?? []).filter((v) => v.labels.source === 'rollouts-webhook').reduce((sum, v) => sum + v.value, 0);
}

if (role === 'ingest' || role === 'workers') {
  const metrics = createMetrics({ defaultMetrics: false });
  // The ingest process runs the ingest role only; the workers process the reducer and watchdog.
  const app = await startGlidepath({ env, config, host: '127.0.0.1', logger: createLogger('silent'), metrics, roles: role === 'workers' ? ['worker'] : ['ingest'] });
  // 'memory' asks for this process's heap, external and array buffers after a full collection
  // when the process runs with --expose-gc (what is live, not what is not yet collected); anything else for the count.
  const live = (): NodeJS.MemoryUsage => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage();
  };
  // 'loop' asks for this process's event-loop delay since the last ask (ms), and starts it again.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  // And the collector's pauses meanwhile: how many, their total and the longest (ms).
  // By kind too (young-generation scavenges, full mark-compacts, incremental marking steps, weak callbacks), to tell which one stalls.
  const GC_KINDS: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
  };
  type Pauses = { count: number; totalMs: number; maxMs: number };
  let byKind: Record<string, Pauses> = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other';
      const k = (byKind[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
      k.count++;
      k.totalMs += e.duration;
      k.maxMs = Math.max(k.maxMs, e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  const loopDelay = () => {
    const kinds = Object.values(byKind);
    const gc = { count: kinds.reduce((n, k) => n + k.count, 0), totalMs: kinds.reduce((n, k) => n + k.totalMs, 0), maxMs: Math.max(0, ...kinds.map((k) => k.maxMs)), byKind };
    const out = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, gc };
    loop.reset();
    byKind = {};
    return out;
  };
  process.on('message', async (m) => send(m === 'memory' ? { memory: live(), peak: peakMemory } : m === 'redis' ? { redis: redisTally() } : m === 'loop' ? { loop: loopDelay() } : { reduced: await reducedTotal(metrics) }));
  const allocations = await sampleAllocations();
  process.once('SIGTERM', async () => {
    await app.close();
    await allocations?.();
    process.exit(0);
  });
  send({ url: app.url });
} else if (role === 'baseline-worker') {
  let processed = 0;
  const worker = new Worker(
    'baseline',
    async () => {
      processed++;
    },
    { connection: new Redis(env.REDIS_URL, { maxRetriesPerRequest: null }), prefix: env.REDIS_PREFIX, concurrency: env.REDUCER_CONCURRENCY },
  );
  process.on('message', (m) => send(m === 'redis' ? { redis: redisTally() } : { reduced: processed }));
  process.once('SIGTERM', async () => {
    await worker.close();
    process.exit(0);
  });
  send({ ready: true });
} else if (role === 'baseline-producer') {
  const queue = new Queue('baseline', { connection: new Redis(env.REDIS_URL), prefix: env.REDIS_PREFIX, defaultJobOptions: { removeOnComplete: { age: 600, count: 20_000 } } });
  process.on('message', async (msg: 'redis' | { payloads: unknown[]; concurrency: number; round: number }) => {
    if (msg === 'redis') return send({ redis: redisTally() });
    let next = 0;
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: msg.concurrency }, async () => {
        while (next < msg.payloads.length) {
          const i = next++;
          const t = performance.now();
          // A job id per round: BullMQ would take a kept job's id again as the same job.
          await queue.add('fact', msg.payloads[i], { jobId: `b-${msg.round}-${i}` });
          latencies.push(performance.now() - t);
        }
      }),
    );
    send({ elapsedMs: performance.now() - started, latencies });
  });
  process.once('SIGTERM', async () => {
    await queue.close();
    process.exit(0);
  });
  send({ ready: true });
} else {
  throw new Error(`unknown BENCH_ROLE ${role}`);
}

/**
 * BENCH_ALLOC_PROF=<dir>: what this process allocates, sampled every 32 KB, the objects young and
 * full collections took back included (node's --heap-prof keeps only what is live at exit), written
 * as a .heapprofile there when the process stops (Chrome DevTools, Memory tab, opens it). Returns
 * the writer, or undefined when not asked.
 */
async function sampleAllocations(): Promise<(() => Promise<void>) | undefined> {
  const dir = process.env.BENCH_ALLOC_PROF;
  if (!dir) return undefined;
  const { Session } = await import('node:inspector/promises');
  const { mkdir, writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}/${role}-${process.pid}.heapprofile`, JSON.stringify(profile));
    session.disconnect();
  };
}
