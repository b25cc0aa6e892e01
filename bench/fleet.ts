/**
 * npm run bench:fleet — a fleet from one template (issue 22): APPS apps (Rollouts labelled with
 * `app.kubernetes.io/name`, half on cluster east, half on west) each roll one release, and the
 * same facts go through three configs, one after the other, each a Glidepath of its own (the
 * composition root, worker role, the real reducer worker and Slack outbox, no writer) on the real
 * Redis under a prefix of its own, dropped at the end:
 *
 *   template   one `pipelineTemplates:` entry generating a pipeline per app (what is measured)
 *   one        one explicit pipeline whose stages select every app: the baseline the issue names
 *   each       APPS explicit pipelines written by hand, one per app: what the template replaces
 *
 * Per config: the worker's time per fact and what it sent to Redis for it (commands and round
 * trips, counted by the fact's async context: bench/lib/redis-count.ts; machine-independent), and
 * routing alone (`routeFact` over the same facts on a fresh running config: first sight, then
 * again). Then the memory one generated pipeline costs (heap after the catalog saw every app,
 * with a GC before each reading), and the time from a new app's first object to its first thread
 * with APPS generated pipelines already there and the fleet's own threads still queued in its
 * channel (worker and writer, the Slack stand-in at Slack's limits; each new app names its own channel).
 * The reducer runs one fact at a time (REDUCER_CONCURRENCY=1), so the times per fact do not overlap.
 * Knobs: BENCH_FLEET_APPS (1000), BENCH_FLEET_NEW_APPS (10). Last line: one JSON object.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { startSlackStandIn } from '../sandbox/slack/server.js';
import { parseEnv } from '../src/config/env.js';
import { configFileSchema, type ConfigFile } from '../src/config/file.js';
import type { Fact, RolloutFact } from '../src/facts/fact.js';
import { normaliseRollout } from '../src/facts/normalise.js';
import { rolloutFactBody } from '../src/facts/schemas.js';
import { startGlidepath } from '../src/glidepath.js';
import { createMetrics } from '../src/obs/metrics.js';
import { routeFact } from '../src/routing/route.js';
import { withCatalog } from '../src/routing/catalog.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { percentile } from './lib/http-load.js';
import { untilDrained } from './lib/drain.js';
import { RedisCounter } from './lib/redis-count.js';
import { stormRolloutBody } from './storm-facts.js';

const APPS = Number(process.env.BENCH_FLEET_APPS ?? 1000);
const NEW_APPS = Number(process.env.BENCH_FLEET_NEW_APPS ?? 10);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 300_000;
const CLUSTERS = ['east', 'west'] as const;
/** One release of an app: progressing, paused, progressing again, healthy, a healthy heartbeat (bench/storm-facts.ts' timeline). */
const TIMELINE_STEPS = [0, 3, 7, 11, 15];
const TRACKED = 'hangar.io/release-tracked=true';

const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc;
const clusterOf = (i: number): string => CLUSTERS[i % 2]!;

let rv = 1_000;
function appFact(app: string, cluster: string, step: number, annotations: Record<string, string> = {}): RolloutFact {
  const { body } = stormRolloutBody({ release: 0, stage: 0, rollout: 0, index: step });
  const rollout = (body as { rollout: { metadata: Record<string, unknown>; spec: { template: { spec: { containers: { image: string }[] } } } } }).rollout;
  rollout.metadata = { ...rollout.metadata, namespace: 'shop', name: app, uid: `uid-${app}`, resourceVersion: String(++rv), labels: { 'hangar.io/release-tracked': 'true', 'app.kubernetes.io/name': app }, annotations: { 'hangar.io/release-id': `rel-${app}`, ...annotations } };
  rollout.spec.template.spec.containers[0]!.image = `registry.example.com/shop/${app}:2.0.0`;
  return normaliseRollout(rolloutFactBody.parse(body), cluster, 0, 'rollouts-webhook');
}

/** The fleet's facts as a burst arrives: every app's first fact, then every app's second, … */
const facts: RolloutFact[] = TIMELINE_STEPS.flatMap((step) => Array.from({ length: APPS }, (_, i) => appFact(`app-${i}`, clusterOf(i), step)));

const clusters = CLUSTERS.map((name) => ({ name, kubeconfigContext: name, optional: true }));
const byApp = (value: string) => ({ name: 'prod', cluster: '{{cluster}}', rollouts: { namespace: '{{namespace}}', selector: `${TRACKED},app.kubernetes.io/name=${value}` } });
const CONFIGS: Record<'template' | 'one' | 'each', () => ConfigFile> = {
  template: () =>
    configFileSchema.parse({
      clusters,
      pipelines: [],
      pipelineTemplates: [{ name: '{{value}}', channel: 'C0FLEET', generator: { clusters: [...CLUSTERS], rollouts: { namespaces: ['shop'], selector: TRACKED }, groupBy: { label: 'app.kubernetes.io/name' } }, stages: [byApp('{{value}}')] }],
    }),
  one: () => configFileSchema.parse({ clusters, pipelines: [{ name: 'fleet', channel: 'C0FLEET', stages: CLUSTERS.map((c) => ({ name: c, cluster: c, rollouts: { namespace: 'shop', selector: TRACKED } })) }] }),
  each: () =>
    configFileSchema.parse({
      clusters,
      pipelines: Array.from({ length: APPS }, (_, i) => ({ name: `app-${i}`, channel: 'C0FLEET', stages: [{ ...byApp(`app-${i}`), cluster: clusterOf(i), rollouts: { namespace: 'shop', selector: `${TRACKED},app.kubernetes.io/name=app-${i}` } }] })),
    }),
};

/**
 * Routing alone, on a fresh running config: µs per fact the first time each object is seen, then
 * the mean of five passes more. Called once per config to warm the JIT before the measured calls.
 */
function routingMicros(config: ConfigFile): { firstSight: number; again: number; routesPerFact: number; pipelines: number } {
  const running = withCatalog(config);
  const pass = (): { us: number; routes: number } => {
    let routes = 0;
    const t = performance.now();
    for (const f of facts) routes += routeFact(running, f).length;
    return { us: ((performance.now() - t) * 1000) / facts.length, routes };
  };
  const first = pass();
  const again = Array.from({ length: 5 }, pass).reduce((a, b) => ({ us: a.us + b.us / 5, routes: 0 }), { us: 0, routes: 0 });
  return { firstSight: round(first.us, 1), again: round(again.us, 1), routesPerFact: round(first.routes / facts.length), pipelines: running.pipelines.length };
}

function heapMb(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/** What one generated pipeline costs in memory: the catalog after it saw one object of every app. */
function memoryPerPipeline(): number | null {
  if (!gc) return null;
  const config = CONFIGS.template();
  const before = heapMb();
  const running = withCatalog(config);
  for (const f of facts.slice(0, APPS)) routeFact(running, f);
  const after = heapMb();
  if (running.pipelines.length !== APPS) throw new Error(`expected ${APPS} generated pipelines, found ${running.pipelines.length}`);
  return round(((after - before) * 2 ** 20) / APPS / 1024, 2);
}

const counter = new RedisCounter().install();
const redis = connectRedis(REDIS_URL, 'worker');
const logger = pino({ level: process.env.LOG_LEVEL ?? 'error' }, pino.destination(2));
const prefixes: string[] = [];

async function glidepathOf(config: ConfigFile, roles: ('worker' | 'writer')[], slackUrl: string) {
  const prefix = `{bench-fleet-${randomUUID().slice(0, 8)}}`;
  prefixes.push(prefix);
  const env = parseEnv({ PORT: '0', REDIS_URL, REDIS_PREFIX: prefix, SLACK_BOT_TOKEN: 'xoxb-bench', SLACK_SIGNING_SECRET: 'bench-signing-secret', SLACK_API_URL: slackUrl, REDUCER_CONCURRENCY: '1', LOG_LEVEL: 'error' });
  return startGlidepath({ env, config, roles, host: '127.0.0.1', logger, metrics: createMetrics({ defaultMetrics: false }) });
}

interface WorkerLine {
  config: string;
  facts: number;
  msPerFact: number;
  p99Ms: number;
  redisCommandsPerFact: number;
  redisRoundTripsPerFact: number;
  topCommandsPerFact: Record<string, number>;
  routing: ReturnType<typeof routingMicros>;
}

async function runConfig(name: keyof typeof CONFIGS, slackUrl: string): Promise<WorkerLine> {
  const routing = routingMicros(CONFIGS[name]());
  const glidepath = await glidepathOf(CONFIGS[name](), ['worker'], slackUrl);
  const times: number[] = [];
  const reducer = glidepath.reducer!;
  const process_ = reducer.process.bind(reducer);
  reducer.process = (fact, origin) =>
    counter.run('fact', async () => {
      const t = performance.now();
      try {
        return await process_(fact, origin);
      } finally {
        times.push(performance.now() - t);
      }
    });
  const workers = glidepath.partitions!.workers();
  try {
    await Promise.all(workers.map((w) => w.pause()));
    const base = Date.now();
    await counter.run('ingest', () => Promise.all(facts.map((f, i) => glidepath.facts.add({ ...f, receivedAt: base + i } as Fact))));
    counter.take();
    workers.forEach((w) => w.resume());
    await counter.run('bench', () => untilDrained(glidepath.facts.queue, name, TIMEOUT_MS));
    const tally = counter.take().get('fact');
    const n = times.length;
    const line: WorkerLine = {
      config: name,
      facts: n,
      msPerFact: round(times.reduce((a, b) => a + b, 0) / n, 3),
      p99Ms: round(percentile(times, 99), 3),
      redisCommandsPerFact: round((tally?.commands ?? 0) / n),
      redisRoundTripsPerFact: round((tally?.roundTrips ?? 0) / n),
      topCommandsPerFact: Object.fromEntries([...(tally?.byCommand ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([c, k]) => [c, round(k / n)])),
      routing,
    };
    console.log(JSON.stringify({ bench: 'fleet', ...line }));
    return line;
  } finally {
    await glidepath.close();
  }
}

/** A new app's first object to its first thread, with APPS generated pipelines known already (each new app in its own channel). */
async function firstThreadMs(): Promise<number[]> {
  const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
  const glidepath = await glidepathOf(CONFIGS.template(), ['worker', 'writer'], slack.apiUrl);
  try {
    // The fleet first: every app's first fact reduced (its thread queued in the fleet's channel).
    const base = Date.now();
    await Promise.all(facts.slice(0, APPS).map((f, i) => glidepath.facts.add({ ...f, receivedAt: base + i } as Fact)));
    await untilDrained(glidepath.facts.queue, 'the fleet', TIMEOUT_MS, ['waiting', 'active', 'prioritized']);
    const out: number[] = [];
    for (let k = 0; k < NEW_APPS; k++) {
      const channel = `C0NEW${k}`;
      const fact = appFact(`new-${k}`, clusterOf(k), 0, { 'glidepath.io/channel': channel });
      const t = performance.now();
      await glidepath.facts.add({ ...fact, receivedAt: Date.now() } as Fact);
      while (slack.transcript.messages(channel).length === 0) {
        if (performance.now() - t > 60_000) throw new Error(`new-${k}: no thread after 60 s`);
        await sleep(5);
      }
      out.push(performance.now() - t);
    }
    return out;
  } finally {
    await glidepath.close();
    await slack.close();
  }
}

const started = Date.now();
console.log(`fleet: ${APPS} apps on ${CLUSTERS.length} clusters, ${facts.length} Rollout facts (${TIMELINE_STEPS.length} per app)`);
const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
const lines: WorkerLine[] = [];
let memoryKiB: number | null;
let firstThread: number[];
try {
  for (const name of ['template', 'one', 'each'] as const) routingMicros(CONFIGS[name]());
  for (const name of ['template', 'one', 'each'] as const) lines.push(await runConfig(name, slack.apiUrl));
  memoryKiB = memoryPerPipeline();
  firstThread = await firstThreadMs();
} finally {
  await slack.close();
  for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
}

const [template, one, each] = lines as [WorkerLine, WorkerLine, WorkerLine];
const ratio = (a: number, b: number): number | null => (b > 0 ? round(a / b) : null);
const vs = (base: WorkerLine) => ({
  routingUs: ratio(template.routing.again, base.routing.again),
  routingUsFirstSight: ratio(template.routing.firstSight, base.routing.firstSight),
  msPerFact: ratio(template.msPerFact, base.msPerFact),
  redisCommandsPerFact: ratio(template.redisCommandsPerFact, base.redisCommandsPerFact),
});
const load = loadavg().map((x) => round(x, 1));
console.log(`load average ${load.join(' ')} (2 cores shared); run took ${round((Date.now() - started) / 1000, 1)} s`);
console.log(
  JSON.stringify({
    bench: 'fleet',
    apps: APPS,
    facts: facts.length,
    vsOneExplicitPipeline: vs(one),
    vsHandWrittenPipelines: vs(each),
    memoryPerGeneratedPipelineKiB: memoryKiB,
    firstThreadMs: { newApps: firstThread.length, p50: round(percentile(firstThread, 50), 1), max: round(Math.max(...firstThread), 1) },
    target: { routingAndCommandsVsOne: 1.5 },
    loadAverage: load,
  }),
);
process.exit(0);
