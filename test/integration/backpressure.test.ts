/**
 * Ingest's backpressure (INGEST_MAX_QUEUED_FACTS): with no reducer running, a burst past the
 * bound is refused with 503 and Retry-After, counted in glidepath_facts_refused_behind_total;
 * every fact that got 202 is reduced once a worker starts; and once the queue has drained,
 * facts are accepted again. Real HTTP, real Redis under a prefix of the test's own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { factsOfJob } from '../../src/facts/fact-batches.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/wait.js';
import { releaseBodies } from '../slack/e2e-scenario.js';

const BOUND = 12;
const BURST = 40;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** `count` facts of one Rollout, each a new observation (its own resourceVersion), so none is a duplicate of another. */
function distinctFacts(count: number): Record<string, any>[] {
  const [first] = releaseBodies() as Record<string, any>[];
  return Array.from({ length: count }, (_, i) => {
    const body = structuredClone(first!);
    body.rollout.metadata.resourceVersion = String(10_000 + i);
    return body;
  });
}

async function counterTotal(metrics: ReturnType<typeof createMetrics>, name: string): Promise<number> {
  const json = await metrics.registry.getSingleMetric(name)?.get();
  return (json?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

describe('ingest backpressure', () => {
  it('refuses a burst past INGEST_MAX_QUEUED_FACTS with 503 and Retry-After, and reduces every fact it accepted', { timeout: 60_000 }, async () => {
    const env = testEnv({ INGEST_MAX_QUEUED_FACTS: String(BOUND) });
    cleanup.push(() => dropPrefix(env.REDIS_PREFIX));
    const ingestMetrics = createMetrics({ defaultMetrics: false });
    const ingest: Glidepath = await startTestGlidepath(testConfig(), env, { workers: false, metrics: ingestMetrics });
    cleanup.push(() => ingest.close());

    // No reducer yet: the queue only grows, so the bound is reached within the burst.
    const url = `${ingest.url}/v1/facts/rollouts`;
    const answers = await Promise.all(distinctFacts(BURST).map((body) => postJson(url, body)));
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status === 503);
    expect(accepted.length + refused.length).toBe(BURST);
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length).toBeLessThanOrEqual(BOUND);
    for (const r of refused) {
      expect(r.json.error).toBe('behind');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await counterTotal(ingestMetrics, 'glidepath_facts_refused_behind_total')).toBe(refused.length);
    expect(await ingest.facts.waiting()).toBe(accepted.length);

    // A worker on the same prefix: everything that was accepted is reduced, nothing is lost.
    const workerMetrics = createMetrics({ defaultMetrics: false });
    const worker = await startTestGlidepath(testConfig(), env, { roles: ['worker'], metrics: workerMetrics });
    cleanup.push(() => worker.close());
    const ids = accepted.map((a) => a.json.id as string);
    expect(new Set(ids).size).toBe(accepted.length);
    await waitFor(async () => (await counterTotal(workerMetrics, 'glidepath_facts_reduced_total')) >= accepted.length || undefined, 'every accepted fact to be reduced', 30_000);
    expect(await counterTotal(workerMetrics, 'glidepath_facts_reduced_total')).toBe(accepted.length);
    // The count is raised as facts are reduced, a job completes once all of its facts are.
    const completed = async () => (await worker.facts.queue.getJobs(['completed'])).flatMap((job) => factsOfJob(job).map((q) => q.id)).sort();
    await waitFor(async () => (await completed()).length === ids.length || undefined, 'the jobs of every accepted fact to complete');
    expect(await completed()).toEqual([...ids].sort());

    // The queue has drained: ingest takes facts again once it reads the depth anew.
    const [later] = distinctFacts(BURST + 1).slice(-1);
    await waitFor(async () => (await postJson(url, later)).status === 202 || undefined, 'a fact to be accepted after the drain');
  });
});
