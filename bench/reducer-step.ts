/**
 * npm run bench:reducer — the reducer worker's step per fact (target index reads, reduce under
 * compare-and-set, target index write, outbox cleared), one fact per batch, against the real
 * Redis, with one stage knowing BENCH_REDUCER_TARGETS targets (2000) spread over 100 releases.
 * It isolates what bench:watch measures end to end: how the cost of a fact grows with the
 * number of targets a stage knows.
 *   first fact  = each target's first fact in its release (the target joins: pending changes)
 *   steady      = BENCH_REDUCER_FACTS (3000) further changes of targets already in their release
 * Also the bytes a save sends to Redis. The last line is one JSON object.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ReduceOutcome } from '../src/releases/reduce/reduce-kit.js';
import { reduceReleaseBatch, targetIndexUpdates } from '../src/releases/worker/reducer-worker.js';
import { ownedTarget, resolveRoutes } from '../src/releases/worker/resolve-routes.js';
import type { RoutedFact } from '../src/routing/route-types.js';
import { ReleaseStore } from '../src/releases/store/store.js';
import { TargetIndex } from '../src/releases/store/target-index.js';
import { createKeys } from '../src/store/keys.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { testConfig } from '../test/helpers/pipeline.js';
import { rolloutFact } from '../test/helpers/reduce-harness.js';
import { rolloutBody } from '../test/helpers/rollout-bodies.js';

const K = Number(process.env.BENCH_REDUCER_TARGETS ?? 2000);
const N = Number(process.env.BENCH_REDUCER_FACTS ?? 3000);
const RELEASES = 100;
const PIPELINE = 'checkout';

const prefix = `{bench-reducer-${randomUUID().slice(0, 8)}}`;
const redis = connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'worker');
const keys = createKeys(prefix);
const config = testConfig();
const targets = new TargetIndex(redis, keys, { forgetAfterMs: 3_600_000 });
const store = new ReleaseStore(redis, keys, { finishedTtlMs: 86_400_000, cacheSize: 1_000 });
// Counts what each save sends (the script's arguments).
let sent = 0;
let saves = 0;
const scripted = redis as Redis & { glidepathSave(...args: string[]): Promise<number> };
const save = scripted.glidepathSave.bind(redis);
scripted.glidepathSave = (...args: string[]) => {
  sent += args.reduce((n, a) => n + a.length, 0);
  saves++;
  return save(...args);
};

const T0 = Date.now();
const name = (j: number): string => `svc-${String(j).padStart(4, '0')}`;
const labels = { 'app.kubernetes.io/part-of': 'checkout', env: 'prod' };
await targets.recordMany(PIPELINE, Array.from({ length: K }, (_, j) => [`prod/shop/${name(j)}`, { stage: 'prod', releaseId: `rel-${j % RELEASES}`, heardAt: T0 }]));

/** As FactReducer.reduceBatch, for one fact: change i of target (7i mod K), alternating Progressing and Healthy. */
async function step(i: number): Promise<void> {
  const j = (i * 7) % K;
  const odd = i % 2 === 1;
  const body = rolloutBody({ name: name(j), uid: `uid-${j}`, generation: 1, rv: 1000 + i, releaseId: `rel-${j % RELEASES}`, image: `r.example/shop/${name(j)}:1`, podHash: 'h2', stableRS: odd ? 'h2' : 'h1', step: odd ? 2 : 1, phase: odd ? 'Healthy' : 'Progressing', labels });
  const fact = rolloutFact(body, T0 + i);
  const route = resolveRoutes(config, fact)[0]!;
  const items: RoutedFact[] = [{ fact, route }];
  const owned = items.map(ownedTarget).filter((t): t is string => t !== undefined);
  const [knownTargets, previousOfTarget] = await Promise.all([targets.knownTargets(PIPELINE, fact.receivedAt), targets.ownedOf(PIPELINE, owned).then((o) => o.releases)]);
  const { saved, result } = await store.update<ReduceOutcome[]>(PIPELINE, route.releaseId, (current) => {
    const s = reduceReleaseBatch(current?.record, items, { config, knownTargets, previousOfTarget });
    return { next: s.changed ? s.record : undefined, outbox: s.effects, result: s.outcomes };
  });
  if (!saved) return;
  await targets.recordMany(PIPELINE, targetIndexUpdates(items, result).targets);
  if (saved.outbox.length > 0) await store.clearOutbox(PIPELINE, route.releaseId, saved.outbox);
}

async function phase(from: number, count: number): Promise<{ msPerFact: number; bytesPerSave: number }> {
  sent = 0;
  saves = 0;
  const t = performance.now();
  for (let i = from; i < from + count; i++) await step(i);
  return { msPerFact: Math.round(((performance.now() - t) / count) * 1000) / 1000, bytesPerSave: Math.round(sent / Math.max(1, saves)) };
}

try {
  const first = await phase(0, K);
  const steady = await phase(K, N);
  console.log(`${K} targets known in the stage: first fact of a target ${first.msPerFact} ms (${first.bytesPerSave} B per save); steady ${steady.msPerFact} ms per fact (${steady.bytesPerSave} B per save)`);
  console.log(JSON.stringify({ bench: 'reducer', targets: K, facts: N, firstFactMs: first.msPerFact, firstBytesPerSave: first.bytesPerSave, steadyMsPerFact: steady.msPerFact, steadyFactsPerSec: Math.round(1000 / steady.msPerFact), steadyBytesPerSave: steady.bytesPerSave }));
} finally {
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
}
