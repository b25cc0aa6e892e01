/** A Glidepath process of the scale benchmark (BENCH_ROLE=worker: the reducer and watchdog), reporting what it reduced. */
import { parseEnv } from '../src/config/env.js';
import { parseConfigFile } from '../src/config/file.js';
import { startGlidepath } from '../src/glidepath.js';
import { createLogger } from '../src/obs/logger.js';
import { createMetrics } from '../src/obs/metrics.js';

const env = parseEnv(process.env);
const config = parseConfigFile(process.env.BENCH_CONFIG ?? '');
const metrics = createMetrics({ defaultMetrics: false });
const app = await startGlidepath({ env, config, host: '127.0.0.1', logger: createLogger(env.LOG_LEVEL), metrics, roles: ['worker'] });

async function total(name: string): Promise<number> {
  const json = await metrics.registry.getSingleMetric(name)?.get();
  return (json?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

process.on('message', async () => {
  process.send?.({
    reduced: await total('glidepath_facts_reduced_total'),
    conflicts: app.store.conflicts,
    held: app.partitions?.status().held ?? [],
    cpuMs: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
  });
});
process.once('SIGTERM', async () => {
  await app.close();
  process.exit(0);
});
process.send?.({ url: app.url });
