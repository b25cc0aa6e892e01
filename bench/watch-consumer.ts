/**
 * The consumer side of bench/watch.ts, in a process of its own (as Glidepath runs apart from the
 * API server): either a bare client-node informer per watched scope (the baseline), or Glidepath
 * itself from its composition root with the ingest and worker roles (the watch source feeding the
 * facts queue, the reducer consuming it). Started by bench/lib/processes.ts `startChild`:
 *
 *   BENCH_CONSUMER=informer  hello once every informer has listed; answers `stats` with the
 *                            [resourceVersion, receivedAt] of every update event.
 *   BENCH_CONSUMER=glidepath hello once Glidepath listens, with the roles of BENCH_ROLES (default
 *                            ingest,worker); answers `stats` with the watch source's list and
 *                            restart counts (the jobs themselves are read from Redis).
 */
import { CustomObjectsApi, KubeConfig, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { parseEnv, type Role } from '../src/config/env.js';
import { startGlidepath, type Glidepath } from '../src/glidepath.js';
import { createMetrics } from '../src/obs/metrics.js';
import { benchConfig, BENCH_CLUSTER, WATCHED } from './watch-world.js';

const kubeconfigPath = process.env.BENCH_KUBECONFIG!;
const send = (message: unknown): void => void process.send!(message);

async function runInformers(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = kc.makeApiClient(CustomObjectsApi);
  const updates: [string, number][] = [];
  let adds = 0;
  let errors = 0;
  const informers = WATCHED.map((w) => {
    const path = `/apis/argoproj.io/v1alpha1/namespaces/${w.namespace}/${w.plural}`;
    const list = (): Promise<KubernetesListObject<KubernetesObject>> =>
      api.listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: w.plural, namespace: w.namespace, labelSelector: w.labelSelector }) as Promise<KubernetesListObject<KubernetesObject>>;
    const informer = makeInformer(kc, path, list, w.labelSelector);
    informer.on('add', () => void adds++);
    informer.on('update', (o) => void updates.push([o.metadata?.resourceVersion ?? '', Date.now()]));
    informer.on('error', () => {
      errors++;
      // client-node's informer does not restart itself after an error; an informer user does.
      setTimeout(() => void informer.start(), 500);
    });
    return informer;
  });
  await Promise.all(informers.map((i) => i.start()));
  send({ ready: true, adds });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'count') send({ updates: updates.length });
    if (m.cmd === 'stats') send({ adds, errors, updates });
    if (m.cmd === 'stop') void Promise.all(informers.map((i) => i.stop())).then(() => send({ stopped: true }));
  });
}

/**
 * Every Redis command this process sends, by name (a MULTI's commands each, a script as one
 * EVALSHA): the bench diffs two snapshots for commands per fact, a figure the machine's load
 * does not change. Counted at ioredis' one entry point, which BullMQ's connections share.
 */
function countRedisCommands(): Record<string, number> {
  const counts: Record<string, number> = {};
  const proto = Redis.prototype as unknown as { sendCommand(command: { name: string }, ...rest: unknown[]): unknown };
  const send = proto.sendCommand;
  proto.sendCommand = function (this: unknown, command: { name: string }, ...rest: unknown[]) {
    counts[command.name] = (counts[command.name] ?? 0) + 1;
    return send.call(this, command, ...rest);
  };
  return counts;
}

async function runGlidepath(): Promise<void> {
  const commands = countRedisCommands();
  const env = parseEnv({ PORT: '0', REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: process.env.REDIS_PREFIX!, LOG_LEVEL: 'error', FACT_JOBS_KEEP_COMPLETED: '200000', ...(process.env.REDUCER_CONCURRENCY ? { REDUCER_CONCURRENCY: process.env.REDUCER_CONCURRENCY } : {}) }); // the bench reads every completed job for its lag
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'error' }, pino.destination(2));
  const config = benchConfig(kubeconfigPath);
  const glidepath: Glidepath = await startGlidepath({
    env,
    config,
    roles: (process.env.BENCH_ROLES ?? 'ingest,worker').split(',') as Role[],
    host: '127.0.0.1',
    logger,
    metrics: createMetrics({ defaultMetrics: false }),
    // Thread effects end here: the benchmark measures watch → record, not Slack.
    threads: { send: async () => undefined },
  });
  send({ ready: true });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'commands') send({ ...commands });
    if (m.cmd === 'stats') send({ held: glidepath.watchSource?.held() ?? [], counts: glidepath.watchSource?.counts(BENCH_CLUSTER) });
    if (m.cmd === 'stop') void glidepath.close().then(() => send({ stopped: true }));
  });
  process.on('SIGTERM', () => void glidepath.close().finally(() => process.exit(0)));
}

if (process.env.BENCH_CONSUMER === 'informer') await runInformers();
else await runGlidepath();
