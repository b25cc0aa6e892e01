/** The stall watchdog on real delayed BullMQ jobs: silence raises one alert, the next fact clears it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { parseConfigFile } from '../../src/config/file.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { RecordingSink } from '../helpers/recording-sink.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';


const config = parseConfigFile(`
settings: { stallAfterMinutes: 0.02 }
clusters: [{ name: prod, kubeconfigContext: prod, optional: true }]
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout" }
`);

describe('stall watchdog', () => {
  const env = testEnv();
  const sink = new RecordingSink();
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(config, env, { threads: sink });
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  const progressing = { generation: 2, releaseId: 'rel-quiet', podHash: 'n2', stableRS: 'n1', step: 0, phase: 'Progressing' as const, message: 'more replicas need to be updated' };

  it('a release in progress that hears nothing for N minutes raises one stall alert; the next fact says heard again', async () => {
    expect((await postJson(`${app.url}/v1/facts/rollouts`, rolloutBody({ ...progressing, rv: 10 }))).status).toBe(202);
    const stalled = await waitFor(async () => {
      const r = await app.store.get('checkout', 'rel-quiet');
      return r?.stall ? r : undefined;
    }, 'stall alert');
    expect(stalled.stages[0]!.status).toBe('Stalled');
    await waitFor(async () => sink.replies.some((r) => r.kind === 'stall') || undefined, 'the stall reply');
    expect(sink.replies.filter((r) => r.kind === 'stall')).toHaveLength(1);
    const armedAfterAlert = await app.watchdog.queue.getDelayed();
    expect(armedAfterAlert.filter((j) => j.data.releaseId === 'rel-quiet')).toHaveLength(0); // one alert, then quiet

    // A heartbeat of the same state proves the notifications flow again. (The same state under
    // another trigger within minutes would be the same observation, one job: only heartbeats repeat.)
    expect((await postJson(`${app.url}/v1/facts/rollouts`, rolloutBody({ ...progressing, rv: 10, sentAt: 42, event: 'on-glidepath-heartbeat' }))).status).toBe(202);
    const heard = await waitFor(async () => {
      const r = await app.store.get('checkout', 'rel-quiet');
      return r && !r.stall ? r : undefined;
    }, 'heard again');
    expect(heard.stages[0]!.status).toBe('Progressing');
    // The record is saved before its outbox is dispatched to the sink: wait for the dispatch too.
    await waitFor(async () => sink.replies.some((r) => r.kind === 'heard-again') || undefined, 'the heard-again reply');
    expect(sink.replies.filter((r) => r.kind === 'heard-again')).toHaveLength(1);
    expect(heard.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['stall', 'heard-again']));
    // …and the watchdog is armed again for the next silence.
    await waitFor(async () => (await app.watchdog.queue.getDelayed()).some((j) => j.data.releaseId === 'rel-quiet') || undefined, 're-armed');
    const metrics = await app.metrics.registry.getSingleMetricAsString('glidepath_stall_alerts_total');
    expect(metrics).toContain('glidepath_stall_alerts_total{pipeline="checkout"} 1');
  });

  it('a healthy (finished) release never stalls', async () => {
    await postJson(`${app.url}/v1/facts/rollouts`, rolloutBody({ generation: 3, rv: 20, releaseId: 'rel-done', podHash: 'm1', stableRS: 'm1', phase: 'Healthy' }));
    const done = await waitFor(async () => (await app.store.get('checkout', 'rel-done')) ?? undefined, 'rel-done');
    expect(done.status).toBe('Complete');
    await new Promise((r) => setTimeout(r, 2_000)); // two stall periods of silence
    expect((await app.store.get('checkout', 'rel-done'))!.stall).toBeUndefined();
    expect(sink.replies.filter((r) => r.releaseId === 'rel-done' && r.kind === 'stall')).toHaveLength(0);
  });
});
