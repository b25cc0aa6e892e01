/** Argo CD facts reach the stage whose Rollouts their Application manages. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { RecordingSink } from '../helpers/recording-sink.js';
import { fixture } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

function application(operationState: Record<string, unknown>, rv: string) {
  return {
    event: 'on-glidepath-sync-failed',
    sentAt: 1787217300,
    application: {
      metadata: { namespace: 'argocd', name: 'shop-checkout', uid: 'app-uid-1', resourceVersion: rv, labels: {}, annotations: {}, ownerReferences: null },
      spec: { project: 'shop', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
      status: {
        sync: { status: 'OutOfSync', revision: 'def4567890' },
        health: { status: 'Suspended', message: 'Rollout is paused' },
        reconciledAt: '2026-08-20T09:14:00Z',
        operationState,
      },
    },
  };
}

describe('Argo CD facts', () => {
  const env = testEnv();
  const sink = new RecordingSink();
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env, { threads: sink });
    // The Rollout shop/checkout is managed by the Application shop-checkout (tracking id annotation).
    expect((await postJson(`${app.url}/v1/facts/rollouts`, fixture('paused'))).status).toBe(202);
    await waitFor(async () => (await app.store.get('checkout', 'rel-4')) ?? undefined, 'rel-4');
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('a sync that failed is attached to the stage and reported with the Argo CD message and revision', async () => {
    const failed = application(
      {
        phase: 'Failed',
        message: 'one or more objects failed to apply, reason: admission webhook denied <!channel>',
        startedAt: '2026-08-20T09:15:00Z',
        finishedAt: '2026-08-20T09:16:00Z',
        retryCount: 2,
        syncResult: { revision: 'def4567890', resources: [] },
      },
      '9001',
    );
    expect((await postJson(`${app.url}/v1/facts/argocd`, failed)).status).toBe(202);
    const reply = await waitFor(async () => sink.replies.find((r) => r.kind === 'sync-failed'), 'sync-failed reply');
    expect(reply).toMatchObject({ releaseId: 'rel-4', stage: 'prod', detail: { revision: 'def4567890', retryCount: 2, finishedAt: '2026-08-20T09:16:00Z' } });
    expect(reply.detail.message).toContain('admission webhook denied');
    const target = Object.values((await app.store.get('checkout', 'rel-4'))!.stages.find((s) => s.name === 'prod')!.targets)[0]!;
    expect(target.sync).toMatchObject({ phase: 'Failed', revision: 'def4567890' });
    // The same failure delivered again is not a second reply.
    await postJson(`${app.url}/v1/facts/argocd`, { ...failed, sentAt: 1787217400 });
    await waitFor(async () => (await app.facts.queue.getJobCounts('waiting', 'active')).waiting === 0 || undefined, 'drained');
    expect(sink.replies.filter((r) => r.kind === 'sync-failed')).toHaveLength(1);
  });

  it('an operation pinned Running by a PostSync hook while the Rollout is paused is reported as hook-pinned', async () => {
    const pinned = application(
      {
        phase: 'Running',
        message: 'waiting for completion of hook batch/Job/smoke-test',
        startedAt: new Date(Date.now() - 15 * 60_000).toISOString(),
        syncResult: { revision: 'abc1234567', resources: [{ kind: 'Job', name: 'smoke-test', hookType: 'PostSync', hookPhase: 'Running' }] },
      },
      '9100',
    );
    expect((await postJson(`${app.url}/v1/facts/argocd`, pinned)).status).toBe(202);
    const reply = await waitFor(async () => sink.replies.find((r) => r.kind === 'hook-pinned'), 'hook-pinned reply');
    expect(reply).toMatchObject({ stage: 'prod', detail: { message: 'waiting on PostSync Job/smoke-test', revision: 'abc1234567' } });
  });

  it('an Application that manages no tracked Rollout is counted as unmatched', async () => {
    const other = application({ phase: 'Failed', startedAt: '2026-08-20T09:15:00Z', finishedAt: '2026-08-20T09:16:00Z' }, '1');
    other.application.metadata.name = 'unrelated';
    expect((await postJson(`${app.url}/v1/facts/argocd`, other)).status).toBe(202);
    await waitFor(async () => {
      const text = await app.metrics.registry.getSingleMetricAsString('glidepath_facts_unmatched_total');
      return text.includes('source="argocd-webhook"') || undefined;
    }, 'unmatched');
  });
});
