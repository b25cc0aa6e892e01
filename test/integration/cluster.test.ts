/**
 * Two worker replicas on a Redis Cluster of 3 masters (own redis-server processes on free ports,
 * started and stopped here) with 6 fact partitions give the same release records as one
 * process on one Redis, every shard doing work and no compare-and-set lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisNodes, type RedisNodes } from '../../bench/lib/redis-nodes.js';
import { parseConfigFile } from '../../src/config/file.js';
import type { Fact } from '../../src/facts/fact.js';
import { normaliseRollout } from '../../src/facts/normalise.js';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { dropPrefix, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const PIPELINES = 6;
const config = parseConfigFile(`
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
        rollouts: { namespace: shop, selector: "app=svc-${i}" }`).join('\n')}
`);

function facts(): Fact[] {
  // Recent, so that no stall watchdog fires while the facts are reduced (a stall would race them).
  const base = Date.now();
  const out: Fact[] = [];
  for (let rv = 1; rv <= 8; rv++) {
    for (let i = 0; i < PIPELINES; i++) {
      const body = rolloutBody({ name: `svc-${i}`, uid: `uid-${i}`, generation: 3, rv, releaseId: 'rel-1', podHash: 'new', stableRS: rv === 8 ? 'new' : 'old', step: Math.min(rv, 7), phase: rv === 8 ? 'Healthy' : rv === 2 ? 'Paused' : 'Progressing', labels: { app: `svc-${i}` } });
      out.push(normaliseRollout(rolloutFactBody.parse(body), 'prod', base + rv));
    }
  }
  return out;
}

async function reduceAll(client: Glidepath, workers: Glidepath[], all: Fact[]): Promise<Map<string, ReleaseRecord>> {
  for (const fact of all) await client.facts.add(fact);
  const reduced = async () => {
    let n = 0;
    for (const w of workers) n += ((await w.metrics.registry.getSingleMetric('glidepath_facts_reduced_total')?.get())?.values ?? []).reduce((s, v) => s + v.value, 0);
    return n;
  };
  await waitFor(async () => (await reduced()) >= all.length || undefined, 'every fact reduced', 60_000);
  // The metric counts a fact as it is reduced; its record is saved with the rest of its batch.
  await waitFor(async () => Object.values(await client.facts.counts('waiting', 'active', 'delayed', 'prioritized')).every((n) => n === 0) || undefined, 'the facts queues drained', 60_000);
  const records = new Map<string, ReleaseRecord>();
  for (let i = 0; i < PIPELINES; i++) {
    const record = await client.store.get(`svc-${i}`, 'rel-1');
    if (record) records.set(`svc-${i}`, { ...record, version: 0, updatedAt: 0 });
  }
  return records;
}

describe('Redis Cluster with partitions', () => {
  let nodes: RedisNodes;
  beforeAll(async () => {
    nodes = await startRedisNodes(3, { cluster: true });
  }, 60_000);
  afterAll(async () => nodes?.stop());

  it('two replicas on 3 shards make the same records as one process on one Redis, every shard working', { timeout: 120_000 }, async () => {
    const all = facts();
    const single = testEnv();
    const one = await startTestGlidepath(config, single, { roles: ['worker'] });
    let expected: Map<string, ReleaseRecord>;
    try {
      expected = await reduceAll(one, [one], all);
    } finally {
      await one.close();
      await dropPrefix(single.REDIS_PREFIX);
    }

    const env = testEnv({ REDIS_PREFIX: 'gp-cluster', REDIS_CLUSTER_NODES: nodes.clusterNodes!, FACT_PARTITIONS: '6', PARTITION_LEASE_MS: '1500' });
    const a = await startTestGlidepath(config, env, { roles: ['worker'] });
    const b = await startTestGlidepath(config, env, { roles: ['worker'] });
    const client = await startTestGlidepath(config, env, { roles: [] });
    try {
      await waitFor(async () => (a.partitions!.status().held.length === 3 && b.partitions!.status().held.length === 3) || undefined, 'partitions split 3/3');
      await nodes.resetStats();
      const records = await reduceAll(client, [a, b], all);
      expect(records.size).toBe(PIPELINES);
      expect(records).toEqual(expected);
      expect(a.store.conflicts + b.store.conflicts).toBe(0);
      const calls = await nodes.commandCalls();
      expect(calls.every((c) => c > 0)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close(), client.close()]);
    }
  });
});
