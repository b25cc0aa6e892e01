/**
 * npm run bench:kinds — what a fact of each kind costs the reducer worker, against a Rollout fact
 * in the same run. Glidepath runs from the composition root with the worker role (the real
 * reducer worker, its Redis index reads, the real Slack outbox; no writer) on the real Redis under
 * a prefix of its own, dropped at the end. Three streams, one after the other
 * (bench/kinds-streams.ts, bench/kinds-kargo.ts):
 *
 *   rollouts  the baseline: as many Rollout facts as the Kargo and ApplicationSet streams have
 *             facts of the new kinds, canary releases of 20 Rollouts over 4 stages
 *   kargo     a Kargo project of 20 Stages over 3 pipeline stages, FREIGHTS Freight each promoted
 *             through all of them: kargo-freight, kargo-promotion and kargo-stage facts
 *   appset    an ApplicationSet of CHILDREN children in 3 RollingSync steps rolling out one
 *             revision: application-set facts, with its children's own application facts
 *
 * Each stream is queued whole with the reducer paused, then reduced; per kind it reports the
 * worker's time per fact (inside FactReducer.process, one fact at a time with the default
 * BENCH_KINDS_CONCURRENCY=1, so the times do not overlap) and what the worker sent to Redis for it
 * (commands, round trips, bytes: bench/lib/redis-count.ts, by the async context of the fact),
 * the thread effects it handed to Slack's outbox, and the size of the release records its stream
 * saved. BullMQ's own work per job (fetching, completing) is reported apart, as `queue`.
 * Knobs: BENCH_KINDS_FREIGHTS (10), BENCH_KINDS_CHILDREN (2000), BENCH_KINDS_CHUNK (children per
 * ApplicationSet status write, 50), BENCH_KINDS_CHILD_SYNC=1 (each child's synced fact too: minutes
 * more), BENCH_KINDS_CONCURRENCY (REDUCER_CONCURRENCY, 1), BENCH_KINDS_CPU_PROF=<dir> (a CPU profile
 * per stream there, and each kind's top functions per fact printed: bench/lib/fact-profiler.ts),
 * BENCH_KINDS_STREAMS=rollouts,appset (only those streams; the baseline always runs).
 * One JSON line per kind, then one for the run.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { parseEnv } from '../src/config/env.js';
import type { Fact } from '../src/facts/fact.js';
import { startGlidepath } from '../src/glidepath.js';
import { createMetrics } from '../src/obs/metrics.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { startSlackStandIn } from '../sandbox/slack/server.js';
import { percentile } from './lib/http-load.js';
import { untilDrained } from './lib/drain.js';
import { RedisCounter, type Tally } from './lib/redis-count.js';
import { kargoStream } from './kinds-kargo.js';
import { FactProfiler } from './lib/fact-profiler.js';
import { APPSET_PIPELINE, appSetStream, KARGO_PIPELINE, kindsConfig, pipelinesFor, rolloutStream, WATCHED_CLUSTER } from './kinds-streams.js';

const FREIGHTS = Number(process.env.BENCH_KINDS_FREIGHTS ?? 10);
const CHILDREN = Number(process.env.BENCH_KINDS_CHILDREN ?? 2000);
const CHUNK = Number(process.env.BENCH_KINDS_CHUNK ?? 50);
const CHILD_SYNC = process.env.BENCH_KINDS_CHILD_SYNC === '1';
const CONCURRENCY = Number(process.env.BENCH_KINDS_CONCURRENCY ?? 1);
const TIMEOUT_MS = Number(process.env.BENCH_KINDS_TIMEOUT_S ?? 240) * 1000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const profiler = process.env.BENCH_KINDS_CPU_PROF ? new FactProfiler(process.env.BENCH_KINDS_CPU_PROF) : undefined;

const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;

const started = Date.now();
const counter = new RedisCounter().install();
const t0 = Date.now();
const kargo = kargoStream(FREIGHTS, WATCHED_CLUSTER, t0);
const appset = appSetStream(CHILDREN, CHUNK, t0, CHILD_SYNC);
const newKindFacts = kargo.length + appset.filter((f) => f.kind === 'application-set').length;
const rollouts = rolloutStream(newKindFacts);
const rolloutPipelines = pipelinesFor(rollouts.length);
const config = kindsConfig(rolloutPipelines);
// BENCH_KINDS_STREAMS=rollouts,appset runs only those (the baseline always: every ratio is over it); the counts stay those of the whole run.
const only = process.env.BENCH_KINDS_STREAMS?.split(',');
const STREAMS: { name: string; facts: Fact[]; pipelines: string[] }[] = [
  { name: 'rollouts', facts: rollouts, pipelines: Array.from({ length: rolloutPipelines }, (_, r) => `svc-${r}`) },
  { name: 'kargo', facts: kargo, pipelines: [KARGO_PIPELINE] },
  { name: 'appset', facts: appset, pipelines: [APPSET_PIPELINE] },
].filter((s) => !only || s.name === 'rollouts' || only.includes(s.name));
console.log(`kinds: ${rollouts.length} Rollout facts (baseline); Kargo: ${kargo.length} facts (${FREIGHTS} Freight × 20 Stages); ApplicationSet: ${appset.length} facts (${CHILDREN} children, ${CHUNK} per status write); reducer concurrency ${CONCURRENCY}`);

const prefix = `{bench-kinds-${randomUUID().slice(0, 8)}}`;
const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
const env = parseEnv({ PORT: '0', REDIS_URL, REDIS_PREFIX: prefix, SLACK_BOT_TOKEN: 'xoxb-bench', SLACK_SIGNING_SECRET: 'bench-signing-secret', SLACK_API_URL: slack.apiUrl, REDUCER_CONCURRENCY: String(CONCURRENCY), LOG_LEVEL: 'error' });
const logger = pino({ level: process.env.LOG_LEVEL ?? 'error' }, pino.destination(2));

/** Per kind: the worker's time per fact, and the thread effects it handed on. */
const times = new Map<string, number[]>();
/** Per kind: the process' CPU time (all threads, µs → ms) inside each fact's process call; less moved by the machine's load than the time. */
const cpu = new Map<string, number>();
const outcomes = new Map<string, Record<string, number>>();
const effects = new Map<string, Record<string, number>>();
const glidepath = await startGlidepath({
  env,
  config,
  roles: ['worker'],
  host: '127.0.0.1',
  logger,
  metrics: createMetrics({ defaultMetrics: false }),
  observeThreads: (_record, sent) => {
    const kind = counter.tag() ?? 'untagged';
    const tally = effects.get(kind) ?? {};
    for (const e of sent) {
      const key = e.type === 'thread.reply' ? `reply:${e.kind}` : e.type.slice('thread.'.length);
      tally[key] = (tally[key] ?? 0) + 1;
    }
    effects.set(kind, tally);
  },
});
const reducer = glidepath.reducer!;
const process_ = reducer.process.bind(reducer);
// The worker calls reducer.process per job: time it, and tag what it sends to Redis with the fact's kind.
const timed: typeof process_ = profiler ? (fact, origin) => profiler.time(fact.kind, () => process_(fact, origin)) : process_;
reducer.process = (fact, origin) =>
  counter.run(fact.kind, async () => {
    const t = performance.now();
    const c = process.cpuUsage();
    try {
      const result = await timed(fact, origin);
      const tally = outcomes.get(fact.kind) ?? {};
      for (const o of result.routes === 0 ? ['unrouted'] : result.outcomes) tally[o] = (tally[o] ?? 0) + 1;
      outcomes.set(fact.kind, tally);
      return result;
    } finally {
      const list = times.get(fact.kind) ?? [];
      list.push(performance.now() - t);
      times.set(fact.kind, list);
      const used = process.cpuUsage(c);
      cpu.set(fact.kind, (cpu.get(fact.kind) ?? 0) + (used.user + used.system) / 1000);
    }
  });
const workers = glidepath.partitions!.workers();
const redis = connectRedis(REDIS_URL, 'worker');

/** Bytes of every release record a pipeline saved (hash fields and values, as Redis holds them). */
async function recordBytes(pipelines: string[]): Promise<number[]> {
  const sizes: number[] = [];
  for (const pipeline of pipelines) {
    const ids = await redis.zrange(glidepath.keys.releaseIndex(pipeline), 0, -1);
    for (const id of ids) {
      const hash = await redis.hgetallBuffer(glidepath.keys.release(pipeline, id));
      sizes.push(Object.entries(hash).reduce((n, [k, v]) => n + Buffer.byteLength(k) + v.length, 0));
    }
  }
  return sizes;
}

interface StreamResult {
  name: string;
  jobs: number;
  seconds: number;
  tallies: Map<string, Tally>;
  times: Map<string, number[]>;
  cpu: Map<string, number>;
  effects: Map<string, Record<string, number>>;
  outcomes: Map<string, Record<string, number>>;
  records: number[];
}

async function runStream(stream: (typeof STREAMS)[number]): Promise<StreamResult> {
  await Promise.all(workers.map((w) => w.pause()));
  const base = Date.now();
  await counter.run('ingest', () => Promise.all(stream.facts.map((f, i) => glidepath.facts.add({ ...f, receivedAt: base + i } as Fact))));
  times.clear();
  cpu.clear();
  effects.clear();
  outcomes.clear();
  counter.take();
  await profiler?.start();
  const t = performance.now();
  workers.forEach((w) => w.resume());
  await counter.run('bench', () => untilDrained(glidepath.facts.queue, stream.name, TIMEOUT_MS));
  const seconds = (performance.now() - t) / 1000;
  if (profiler) for (const [kind, p] of Object.entries(await profiler.stop(stream.name))) console.log(JSON.stringify({ bench: 'kinds', profile: kind, ...p }));
  const tallies = counter.take();
  const jobs = [...times.values()].reduce((n, l) => n + l.length, 0);
  const records = await counter.run('bench', () => recordBytes(stream.pipelines));
  return { name: stream.name, jobs, seconds, tallies, times: new Map(times), cpu: new Map(cpu), effects: new Map(effects), outcomes: new Map(outcomes), records };
}

interface KindLine {
  kind: string;
  stream: string;
  facts: number;
  msPerFact: number;
  cpuMsPerFact: number;
  p50Ms: number;
  p99Ms: number;
  factsPerSec: number;
  redisCommandsPerFact: number;
  redisRoundTripsPerFact: number;
  bytesToRedisPerFact: number;
  topCommandsPerFact: Record<string, number>;
  /** Bytes of arguments sent to Redis per fact, by command (the largest). */
  topBytesPerFact: Record<string, number>;
  threadEffectsPerFact: Record<string, number>;
  /** What the reducer made of the facts, per route (a fact may have several). */
  outcomes: Record<string, number>;
  recordBytes: { releases: number; mean: number; max: number };
}

function kindLine(r: StreamResult, kind: string, list: number[]): KindLine {
  const n = list.length;
  const tally = r.tallies.get(kind);
  const mean = list.reduce((a, b) => a + b, 0) / n;
  const largest = (m: Map<string, number> | undefined): [string, number][] => [...(m ?? new Map<string, number>()).entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
  const top = largest(tally?.byCommand);
  return {
    kind,
    stream: r.name,
    facts: n,
    msPerFact: round(mean, 3),
    cpuMsPerFact: round((r.cpu.get(kind) ?? 0) / n, 3),
    p50Ms: round(percentile(list.map((x) => round(x, 3)), 50), 3),
    p99Ms: round(percentile(list.map((x) => round(x, 3)), 99), 3),
    factsPerSec: Math.round(1000 / mean),
    redisCommandsPerFact: round((tally?.commands ?? 0) / n),
    redisRoundTripsPerFact: round((tally?.roundTrips ?? 0) / n),
    bytesToRedisPerFact: Math.round((tally?.bytes ?? 0) / n),
    topCommandsPerFact: Object.fromEntries(top.map(([c, k]) => [c, round(k / n)])),
    topBytesPerFact: Object.fromEntries(largest(tally?.bytesByCommand).map(([c, k]) => [c, Math.round(k / n)])),
    threadEffectsPerFact: Object.fromEntries(Object.entries(r.effects.get(kind) ?? {}).map(([k, v]) => [k, round(v / n, 3)])),
    outcomes: r.outcomes.get(kind) ?? {},
    recordBytes: { releases: r.records.length, mean: Math.round(r.records.reduce((a, b) => a + b, 0) / Math.max(1, r.records.length)), max: Math.max(0, ...r.records) },
  };
}

const results: StreamResult[] = [];
try {
  for (const stream of STREAMS) {
    const r = await runStream(stream);
    results.push(r);
    const queue = r.tallies.get('untagged');
    console.log(`${r.name}: ${r.jobs} jobs reduced in ${round(r.seconds)} s (${Math.round(r.jobs / r.seconds)} jobs/s end to end); BullMQ and other untagged work ${round((queue?.commands ?? 0) / r.jobs)} Redis commands per job; ${r.records.length} release records`);
  }
} finally {
  await glidepath.close();
  await slack.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
}

const lines: KindLine[] = [];
for (const r of results) for (const [kind, list] of r.times) lines.push(kindLine(r, kind, list));
const baseline = lines.find((l) => l.kind === 'rollout')!;
const ratio = (a: number, b: number): number | null => (b > 0 ? round(a / b) : null);
for (const l of lines) {
  const vs = {
    msPerFact: ratio(l.msPerFact, baseline.msPerFact),
    cpuMsPerFact: ratio(l.cpuMsPerFact, baseline.cpuMsPerFact),
    redisCommandsPerFact: ratio(l.redisCommandsPerFact, baseline.redisCommandsPerFact),
    redisRoundTripsPerFact: ratio(l.redisRoundTripsPerFact, baseline.redisRoundTripsPerFact),
    bytesToRedisPerFact: ratio(l.bytesToRedisPerFact, baseline.bytesToRedisPerFact),
    recordBytesMax: ratio(l.recordBytes.max, baseline.recordBytes.max),
  };
  console.log(JSON.stringify({ bench: 'kinds', ...l, vsRollout: vs }));
}
const load = loadavg().map((x) => round(x, 1));
const queuePerJob = Object.fromEntries(results.map((r) => [r.name, round((r.tallies.get('untagged')?.commands ?? 0) / r.jobs)]));
const endToEnd = Object.fromEntries(results.map((r) => [r.name, Math.round(r.jobs / r.seconds)]));
console.log(`load average ${load.join(' ')} (2 cores shared); run took ${round((Date.now() - started) / 1000, 1)} s`);
console.log(JSON.stringify({ bench: 'kinds', summary: true, concurrency: CONCURRENCY, freights: FREIGHTS, children: CHILDREN, chunk: CHUNK, childSync: CHILD_SYNC, jobsPerSecEndToEnd: endToEnd, queueCommandsPerJob: queuePerJob, loadAverage: load, seconds: round((Date.now() - started) / 1000, 1) }));
process.exit(0);
