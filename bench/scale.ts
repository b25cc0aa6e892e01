/**
 * bench:scale — 12 pipelines' facts through 2 worker replicas with K=6 fact partitions, on a
 * local Redis Cluster of 3 masters and then on one Redis node (own redis-server processes on
 * free ports, started and stopped here, temp dirs removed). Prints Redis commands per fact
 * (INFO commandstats summed over the shards) next to a bare BullMQ queue's commands per job in
 * the same run, the busiest shard's share of commands, compare-and-set conflicts per 1,000
 * facts, and facts/s against the same run on one node. Last line: one JSON object.
 *
 * Options (env): BENCH_ROLLOUTS (targets per pipeline, default 4), BENCH_RELEASES (per pipeline, default 5).
 */
import { Queue, Worker } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { parseEnv } from '../src/config/env.js';
import { parseConfigFile } from '../src/config/file.js';
import type { Fact } from '../src/facts/fact.js';
import { normaliseRollout } from '../src/facts/normalise.js';
import { rolloutFactBody } from '../src/facts/schemas.js';
import { startGlidepath } from '../src/glidepath.js';
import { createLogger } from '../src/obs/logger.js';
import { createMetrics } from '../src/obs/metrics.js';
import { startChild, type Child } from './lib/processes.js';
import { startRedisNodes, type RedisNodes } from './lib/redis-nodes.js';
import { loadAtStart, loadAverages } from './lib/load.js';

const PIPELINES = 12;
const PARTITIONS = 6;
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 4);
const RELEASES = Number(process.env.BENCH_RELEASES ?? 5);
const STEPS = 20;
const PREFIX = 'bench-scale';

const CONFIG = `
settings: { stallAfterMinutes: 60 }
clusters:
  - name: prod
    kubeconfigContext: prod
    optional: true
pipelines:
${Array.from({ length: PIPELINES }, (_, i) => `  - name: svc-${i}
    channel: C0SVC${i}
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: svc-${i}, selector: "app.kubernetes.io/part-of=svc-${i}" }`).join('\n')}
`;

/** One canary release of one Rollout: 20 observations, each a distinct object version. */
function rolloutFact(pipeline: number, rollout: number, release: number, step: number): Fact {
  const phase = step === STEPS - 1 ? 'Healthy' : step === 3 ? 'Paused' : 'Progressing';
  const name = `svc-${pipeline}-${rollout}`;
  const body = rolloutFactBody.parse({
    event: phase === 'Paused' ? 'on-rollout-paused' : phase === 'Healthy' ? 'on-rollout-completed' : 'on-rollout-updated',
    sentAt: 1_790_000_000 + release * 100 + step,
    rollout: {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: {
        namespace: `svc-${pipeline}`,
        name,
        uid: `uid-${name}`,
        generation: 5 + release,
        resourceVersion: String(1000 + release * 100 + step),
        labels: { 'app.kubernetes.io/part-of': `svc-${pipeline}` },
        annotations: { 'hangar.io/release-id': `rel-${release}` },
      },
      spec: { replicas: 5, strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 60 }] } }, template: { spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:${release}.0.0` }] } } },
      status: {
        observedGeneration: String(5 + release),
        currentPodHash: `h${release}`,
        stableRS: phase === 'Healthy' ? `h${release}` : `h${release - 1}`,
        currentStepIndex: Math.min(3, Math.floor(step / 5)),
        phase,
        ...(phase === 'Paused' ? { message: 'CanaryPauseStep', pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-11-29T12:00:00Z' }], controllerPause: true } : {}),
        replicas: 5,
        updatedReplicas: 5,
        readyReplicas: 5,
        availableReplicas: 5,
        canary: {},
      },
    },
  });
  return normaliseRollout(body, 'prod', Date.now());
}

/** Releases in order; within a release the pipelines' rollouts interleave, as a busy platform sends them. */
function allFacts(): Fact[][] {
  const rounds: Fact[][] = [];
  for (let r = 0; r < RELEASES; r++) {
    const round: Fact[] = [];
    for (let s = 0; s < STEPS; s++) for (let p = 0; p < PIPELINES; p++) for (let o = 0; o < ROLLOUTS; o++) round.push(rolloutFact(p, o, r + 1, s));
    rounds.push(round);
  }
  return rounds;
}

interface Run {
  facts: number;
  seconds: number;
  factsPerSecond: number;
  commandsPerFact: number;
  shardShares: number[];
  busiestShare: number;
  conflictsPer1000: number;
  workerCpuMsPerFact: number;
  /** The commands that cost most, per fact, largest first. */
  topCommands: string;
}

/** The largest costs in INFO commandstats, per fact (or job), as `name n.n` pairs. */
async function topCommands(nodes: RedisNodes, per: number, top = 12): Promise<string> {
  const byName = [...(await nodes.commandsByName())].sort((a, b) => b[1] - a[1]).slice(0, top);
  return byName.map(([name, n]) => `${name} ${Math.round((n / per) * 10) / 10}`).join(', ');
}

async function waitUntil(probe: () => Promise<boolean>, what: string, limitMs = 600_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runGlidepath(nodes: RedisNodes, rounds: Fact[][]): Promise<Run> {
  const envVars: Record<string, string> = {
    PORT: '0',
    REDIS_URL: nodes.url,
    REDIS_PREFIX: PREFIX,
    FACT_PARTITIONS: String(PARTITIONS),
    PARTITION_LEASE_MS: '3000',
    REDUCER_CONCURRENCY: '64',
    LOG_LEVEL: 'error',
    ...(nodes.clusterNodes ? { REDIS_CLUSTER_NODES: nodes.clusterNodes } : {}),
  };
  const config = parseConfigFile(CONFIG);
  const client = await startGlidepath({ env: parseEnv(envVars), config, host: '127.0.0.1', roles: [], logger: createLogger('error'), metrics: createMetrics({ defaultMetrics: false }) });
  const workers: Child[] = [];
  try {
    for (let i = 0; i < 2; i++) workers.push(await startChild(new URL('./scale-worker.ts', import.meta.url).pathname, { ...envVars, BENCH_CONFIG: CONFIG }));
    const status = async () => {
      const out = [];
      for (const w of workers) out.push((await w.request('status')) as { reduced: number; conflicts: number; held: number[]; cpuMs: number });
      return out;
    };
    // Both replicas work their share (3 partitions each) before the clock starts.
    await waitUntil(async () => (await status()).every((s) => s.held.length === PARTITIONS / 2), 'the partitions to split 3/3', 60_000);
    const before = await status();
    await nodes.resetStats();
    const total = rounds.reduce((n, r) => n + r.length, 0);
    const started = performance.now();
    for (const round of rounds) {
      for (let i = 0; i < round.length; i += 500) await Promise.all(round.slice(i, i + 500).map((f) => client.facts.add(f)));
    }
    let after = before;
    await waitUntil(async () => {
      after = await status();
      return after.reduce((n, s) => n + s.reduced, 0) >= total;
    }, 'every fact reduced');
    const seconds = (performance.now() - started) / 1000;
    const calls = await nodes.commandCalls();
    const top = await topCommands(nodes, total);
    const sum = calls.reduce((a, b) => a + b, 0);
    const conflicts = after.reduce((n, s) => n + s.conflicts, 0) - before.reduce((n, s) => n + s.conflicts, 0);
    const cpu = after.reduce((n, s) => n + s.cpuMs, 0) - before.reduce((n, s) => n + s.cpuMs, 0);
    const shares = calls.map((c) => Math.round((c / sum) * 1000) / 1000);
    return {
      facts: total,
      seconds: Math.round(seconds * 100) / 100,
      factsPerSecond: Math.round(total / seconds),
      commandsPerFact: Math.round((sum / total) * 10) / 10,
      shardShares: shares,
      busiestShare: Math.max(...shares),
      conflictsPer1000: Math.round((conflicts / total) * 1000 * 100) / 100,
      workerCpuMsPerFact: Math.round((cpu / total) * 100) / 100,
      topCommands: top,
    };
  } finally {
    for (const w of workers) await w.stop();
    await client.close();
  }
}

/** A bare BullMQ queue (one hash tag) on the same Redis: add with a job id, process with a no-op worker. */
async function baseline(nodes: RedisNodes, jobs: number): Promise<{ perJob: number; top: string }> {
  const connect = (): Redis =>
    nodes.clusterNodes
      ? (new Cluster(nodes.ports.map((port) => ({ host: '127.0.0.1', port })), { redisOptions: { maxRetriesPerRequest: null } }) as unknown as Redis)
      : new Redis(nodes.url, { maxRetriesPerRequest: null });
  const [a, b] = [connect(), connect()];
  const prefix = `${PREFIX}-baseline:{baseline}`;
  const queue = new Queue('baseline', { connection: a, prefix, defaultJobOptions: { removeOnComplete: { count: 1_000 } } });
  let done = 0;
  const worker = new Worker('baseline', async () => void done++, { connection: b, prefix, concurrency: 64 });
  await worker.waitUntilReady();
  await nodes.resetStats();
  for (let i = 0; i < jobs; i += 500) await queue.addBulk(Array.from({ length: Math.min(500, jobs - i) }, (_, j) => ({ name: 'fact', data: { i: i + j }, opts: { jobId: `b-${i + j}` } })));
  await waitUntil(async () => done >= jobs, 'the baseline jobs');
  const calls = (await nodes.commandCalls()).reduce((x, y) => x + y, 0);
  const top = await topCommands(nodes, jobs);
  await worker.close();
  await queue.close();
  a.disconnect();
  b.disconnect();
  return { perJob: Math.round((calls / jobs) * 10) / 10, top };
}

async function main(): Promise<void> {
  const rounds = allFacts();
  const cluster = await startRedisNodes(3, { cluster: true });
  let onCluster: Run;
  let baselineCluster: number;
  let baselineTop: string;
  try {
    onCluster = await runGlidepath(cluster, rounds);
    ({ perJob: baselineCluster, top: baselineTop } = await baseline(cluster, onCluster.facts));
  } finally {
    await cluster.stop();
  }
  const single = await startRedisNodes(1, { cluster: false });
  let onNode: Run;
  try {
    onNode = await runGlidepath(single, rounds);
  } finally {
    await single.stop();
  }
  console.log(`${onCluster.facts} facts of ${PIPELINES} pipelines, 2 worker replicas, ${PARTITIONS} partitions`);
  console.log(`Redis Cluster (3 masters): ${onCluster.factsPerSecond} facts/s, ${onCluster.commandsPerFact} commands/fact (bare BullMQ: ${baselineCluster}/job), shard shares ${onCluster.shardShares.join(' / ')} (busiest ${onCluster.busiestShare}, target <= 0.5), CAS conflicts ${onCluster.conflictsPer1000}/1,000 facts (target <= 5)`);
  console.log(`  top commands per fact: ${onCluster.topCommands}`);
  console.log(`  bare BullMQ, per job:   ${baselineTop}`);
  console.log(`one Redis node:            ${onNode.factsPerSecond} facts/s, ${onNode.commandsPerFact} commands/fact, CAS conflicts ${onNode.conflictsPer1000}/1,000 facts`);
  console.log(`cluster/node throughput: ${Math.round((onCluster.factsPerSecond / onNode.factsPerSecond) * 100) / 100} (2 cores: Redis, 2 workers and the feeder share them)`);
  console.log(
    JSON.stringify({
      bench: 'scale',
      pipelines: PIPELINES,
      partitions: PARTITIONS,
      replicas: 2,
      facts: onCluster.facts,
      commandsPerFact: onCluster.commandsPerFact,
      baselineCommandsPerJob: baselineCluster,
      busiestShardShare: onCluster.busiestShare,
      shardShares: onCluster.shardShares,
      casConflictsPer1000: onCluster.conflictsPer1000,
      factsPerSecondCluster: onCluster.factsPerSecond,
      factsPerSecondOneNode: onNode.factsPerSecond,
      casConflictsPer1000OneNode: onNode.conflictsPer1000,
      workerCpuMsPerFact: onCluster.workerCpuMsPerFact,
      loadStart: loadAtStart,
      loadEnd: loadAverages(),
    }),
  );
}

await main();
process.exit(0);
