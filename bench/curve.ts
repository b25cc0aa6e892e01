/**
 * npm run bench:curve — the cost curve of a fact: does a fact cost more when the fleet is larger?
 * For each point, Glidepath runs from the composition root with the worker role on the real Redis
 * under a prefix of its own (dropped after the point), and the reducer's real step
 * (FactReducer.process: routes, target index reads, reduce under compare-and-set, save, index
 * write, outbox dispatch) is driven directly, one fact at a time.
 *   targets   10, 100, 1,000, 10,000 targets in one stage, over 10 releases in flight
 *             (release r is app r's: its image and app label, on every r-th target)
 *   releases  10, 100, 1,000 releases in flight, 1,000 targets in the stage between them
 * Each point is seeded through the same step (one first fact per target), then measured on
 * BENCH_CURVE_FACTS (200) further changes of targets already in their release (after a warm-up,
 * uncounted: one change per release, then as many as are measured): reducer ms per
 * fact and what the step sends to Redis per fact (argument bytes, commands: bench/lib/redis-count.ts).
 * The slope of a curve is its last point over its first (the target: ≤ 1.5×).
 * Knobs: BENCH_CURVE_FACTS, BENCH_CURVE_TARGETS (10,100,1000,10000), BENCH_CURVE_RELEASES (10,100,1000),
 * BENCH_CURVE_DETAIL=1 (each point's bytes per fact by Redis command), BENCH_CURVE_PROFILE=<dir> (a V8
 * CPU profile of each point's measured facts alone, curve-<targets>t-<releases>r.cpuprofile, and
 * their top functions printed: seeding 10,000 targets would otherwise fill the profile).
 * Last line: one JSON object with the figures and the load average at start and end.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { parseEnv } from '../src/config/env.js';
import { startGlidepath } from '../src/glidepath.js';
import { createMetrics } from '../src/obs/metrics.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { startSlackStandIn } from '../sandbox/slack/server.js';
import { testConfig } from '../test/helpers/pipeline.js';
import { rolloutFact } from '../test/helpers/reduce-harness.js';
import { rolloutBody } from '../test/helpers/rollout-bodies.js';
import { FactProfiler } from './lib/fact-profiler.js';
import { RedisCounter } from './lib/redis-count.js';

const FACTS = Number(process.env.BENCH_CURVE_FACTS ?? 200);
const list = (v: string | undefined, d: number[]): number[] => (v ? v.split(',').map(Number) : d);
const TARGET_POINTS = list(process.env.BENCH_CURVE_TARGETS, [10, 100, 1000, 10_000]);
const RELEASE_POINTS = list(process.env.BENCH_CURVE_RELEASES, [10, 100, 1000]);
const RELEASES_FOR_TARGETS = 10;
const TARGETS_FOR_RELEASES = 1000;
const SEED_IN_FLIGHT = 8;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const profiler = process.env.BENCH_CURVE_PROFILE ? new FactProfiler(process.env.BENCH_CURVE_PROFILE) : undefined;
const loadStart = loadavg();

const counter = new RedisCounter().install();
const config = testConfig();
const name = (j: number): string => `svc-${String(j).padStart(5, '0')}`;
const round = (n: number, d = 3): number => Math.round(n * 10 ** d) / 10 ** d;
const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
const logger = pino({ level: process.env.LOG_LEVEL ?? 'error' }, pino.destination(2));
const redis = connectRedis(REDIS_URL, 'worker');

interface Point {
  targets: number;
  releases: number;
  msPerFact: number;
  bytesPerFact: number;
  commandsPerFact: number;
}

/**
 * Change `n` of target j: a canary moving between steps 1 and 2, never finishing. Release r is
 * app r's (its image, its app label) on its share of the stage's targets: R apps releasing at once.
 */
function change(j: number, releases: number, n: number, t0: number) {
  const r = j % releases;
  const labels = { 'app.kubernetes.io/part-of': 'checkout', 'app.kubernetes.io/name': `app-${r}`, env: 'prod' };
  return rolloutFact(
    rolloutBody({ name: name(j), uid: `uid-${j}`, generation: 1, rv: 10 + n, releaseId: `rel-${r}`, image: `r.example/shop/app-${r}:1`, podHash: 'h2', stableRS: 'h1', step: 1 + (n % 2), phase: 'Progressing', labels }),
    t0 + n,
  );
}

async function point(targets: number, releases: number): Promise<Point> {
  const prefix = `{bench-curve-${randomUUID().slice(0, 8)}}`;
  const env = parseEnv({ PORT: '0', REDIS_URL, REDIS_PREFIX: prefix, SLACK_BOT_TOKEN: 'xoxb-bench', SLACK_SIGNING_SECRET: 'bench-signing-secret', SLACK_API_URL: slack.apiUrl, LOG_LEVEL: 'error' });
  const glidepath = await startGlidepath({ env, config, roles: ['worker'], host: '127.0.0.1', logger, metrics: createMetrics({ defaultMetrics: false }) });
  const reducer = glidepath.reducer!;
  try {
    const t0 = Date.now();
    // Seeding: each target's first fact, a few in flight (one lane per release keeps their order).
    let next = 0;
    await Promise.all(
      Array.from({ length: SEED_IN_FLIGHT }, async () => {
        while (next < targets) {
          const j = next++;
          await reducer.process(change(j, releases, 0, t0));
        }
      }),
    );
    // Warm-up, not counted: one change of each release (its first target), so that every record has
    // heard of the whole seeded stage, as in a fleet that has run a while; without it the first
    // fact of each of 1,000 releases rewrites its other releases, once. Then as many changes as
    // are measured (the first point would pay for the JIT).
    for (let r = 0; r < Math.min(releases, targets); r++) await reducer.process(change(r, releases, 1, t0 + targets));
    for (let i = 1; i <= FACTS; i++) await reducer.process(change((i * 7919) % targets, releases, i, t0 + targets));
    counter.take();
    await profiler?.start();
    const started = performance.now();
    for (let i = FACTS + 1; i <= 2 * FACTS; i++) {
      const j = (i * 7919) % targets;
      const fact = change(j, releases, i, t0 + targets);
      await counter.run('measure', () => (profiler ? profiler.time(fact.kind, () => reducer.process(fact)) : reducer.process(fact)));
    }
    const ms = performance.now() - started;
    if (profiler) for (const [kind, p] of Object.entries(await profiler.stop(`curve-${targets}t-${releases}r`))) console.log(JSON.stringify({ bench: 'curve', profile: kind, targets, releases, ...p }));
    const tally = counter.take().get('measure');
    if (process.env.BENCH_CURVE_DETAIL) console.log(JSON.stringify(Object.fromEntries([...(tally?.bytesByCommand ?? [])].map(([c, b]) => [c, Math.round(b / FACTS)]))));
    return { targets, releases, msPerFact: round(ms / FACTS), bytesPerFact: Math.round((tally?.bytes ?? 0) / FACTS), commandsPerFact: round((tally?.commands ?? 0) / FACTS, 1) };
  } finally {
    await glidepath.close();
    await deleteKeysWithPrefix(redis, prefix);
  }
}

const slope = (points: Point[], key: 'msPerFact' | 'bytesPerFact'): number => round(points[points.length - 1]![key] / Math.max(1e-9, points[0]![key]), 2);
const show = (p: Point): string => `${String(p.targets).padStart(6)} targets ${String(p.releases).padStart(5)} releases: ${p.msPerFact.toFixed(3)} ms per fact, ${p.bytesPerFact} B and ${p.commandsPerFact} commands to Redis per fact`;

try {
  console.log(`curve: ${FACTS} measured facts per point; load average ${loadStart.map((l) => l.toFixed(2)).join(' ')}`);
  const byTargets: Point[] = [];
  for (const t of TARGET_POINTS) {
    byTargets.push(await point(t, RELEASES_FOR_TARGETS));
    console.log(show(byTargets.at(-1)!));
  }
  const byReleases: Point[] = [];
  for (const r of RELEASE_POINTS) {
    byReleases.push(await point(TARGETS_FOR_RELEASES, r));
    console.log(show(byReleases.at(-1)!));
  }
  const slopes = { targetsMs: slope(byTargets, 'msPerFact'), targetsBytes: slope(byTargets, 'bytesPerFact'), releasesMs: slope(byReleases, 'msPerFact'), releasesBytes: slope(byReleases, 'bytesPerFact') };
  console.log(
    `slope (last point over first, target ≤ 1.5×): targets ${TARGET_POINTS[0]}→${TARGET_POINTS.at(-1)}: ${slopes.targetsMs}× ms, ${slopes.targetsBytes}× bytes; releases ${RELEASE_POINTS[0]}→${RELEASE_POINTS.at(-1)}: ${slopes.releasesMs}× ms, ${slopes.releasesBytes}× bytes`,
  );
  const loadEnd = loadavg();
  console.log(JSON.stringify({ bench: 'curve', facts: FACTS, byTargets, byReleases, slopes, loadStart: loadStart.map((l) => round(l, 2)), loadEnd: loadEnd.map((l) => round(l, 2)) }));
} finally {
  redis.disconnect();
  await slack.close();
}
process.exit(0);
