/**
 * Argo CD keeps a failing automated sync Running through its retries and reports Failed only after
 * the last one, minutes later. Driven by the Argo CD and Rollouts simulators and their
 * notifications engines (Glidepath's own ConfigMaps), the thread hears of each failed attempt as
 * it happens, then of the final failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { renderReply } from '../../src/slack/render/reply.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { SimulatedGit, type DesiredManifests } from '../../sandbox/kube/controllers/git.js';
import { startStandInCluster, type StandInCluster } from '../../sandbox/kube/stand-in.js';
import { dropPrefix, INGEST_TOKEN, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { RecordingSink } from '../helpers/recording-sink.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';

const REPO = 'https://git.example.com/shop/deploy.git';
const TRACKED = { 'hangar.io/release-tracked': 'true' };
const FAILURE = 'one or more objects failed to apply, reason: admission webhook "validate.kyverno.svc" denied the request';

function manifests(version: string, releaseId: string, extra: Partial<DesiredManifests> = {}): Record<string, DesiredManifests> {
  return {
    'checkout/prod': {
      rollouts: [{ name: 'checkout', image: `registry.example.com/shop/checkout:${version}`, replicas: 1, annotations: { 'hangar.io/release-id': releaseId }, labels: { ...TRACKED, 'app.kubernetes.io/part-of': 'checkout', env: 'prod' } }],
      ...extra,
    },
  };
}

describe('Argo CD sync retries in the thread', () => {
  const env = testEnv();
  const sink = new RecordingSink();
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const git = new SimulatedGit();
  let app: Glidepath;
  let cluster: StandInCluster;
  const appRt = () => cluster.store.registry.byKind('Application');
  const sync = (extra: object = {}) => cluster.store.mutate(appRt(), 'argocd', 'shop-checkout', (o) => void (o.operation = { initiatedBy: { username: 'ci' }, sync: { revision: 'main' }, ...extra }));
  const settle = async (ms: number) => {
    await clock.advance(ms);
    await Promise.all(cluster.notifications.map((e) => e.idle()));
  };

  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(), env, { threads: sink });
    git.commit(REPO, 'main', manifests('1.29.0', 'rel-9'));
    // No API server client here: the engines POST their facts to Glidepath, as on a real cluster.
    cluster = await startStandInCluster({
      name: 'prod',
      clock,
      users: USERS,
      namespaces: ['argocd', 'shop'],
      kubeconfigPath: false,
      controllers: {
        rollouts: { podReadyMs: 1_000 },
        argocd: [{ git, refreshDelayMs: 3000, reconcileEveryMs: 600_000, jitterMs: 0, syncDurationMs: 2000, retryBackoffMs: 5000 }],
        notifications: {
          rollouts: { webhook: { url: `${app.url}/v1/facts/rollouts`, token: INGEST_TOKEN } },
          applications: [{ namespaces: ['argocd'], webhook: { url: `${app.url}/v1/facts/argocd`, token: INGEST_TOKEN } }],
        },
      },
    });
    cluster.store.create(appRt(), 'argocd', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop-checkout', labels: TRACKED },
      spec: { project: 'default', source: { repoURL: REPO, targetRevision: 'main', path: 'checkout/prod' }, destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
    });
    sync();
    await settle(30_000);
    await waitFor(async () => (await app.store.get('checkout', 'rel-9'))?.stages.find((s) => s.name === 'prod')?.healthyAt ?? undefined, 'rel-9 healthy in prod');
  });
  afterAll(async () => {
    await cluster?.stop();
    await app?.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('says "sync attempt k of n failed" at each failed attempt, then that the sync failed after the last', async () => {
    git.commit(REPO, 'main', manifests('1.30.0', 'rel-10', { failSync: FAILURE }));
    sync({ retry: { limit: 2 } });
    await settle(2_000);
    const attempt = await waitFor(async () => sink.replies.find((r) => r.kind === 'sync-retrying'), 'first failed attempt');
    expect(attempt).toMatchObject({ releaseId: 'rel-9', stage: 'prod', detail: { retryCount: 1, retryLimit: 2 } });
    await settle(7_000);
    await waitFor(async () => sink.replies.filter((r) => r.kind === 'sync-retrying').length === 2 || undefined, 'second failed attempt');
    await settle(7_000);
    await waitFor(async () => sink.replies.find((r) => r.kind === 'sync-failed'), 'final failure');

    const syncReplies = sink.replies.filter((r) => r.kind.startsWith('sync-'));
    expect(syncReplies.map((r) => [r.kind, r.detail.retryCount])).toEqual([
      ['sync-retrying', 1],
      ['sync-retrying', 2],
      ['sync-failed', 2],
    ]);
    const record = (await app.store.get('checkout', 'rel-9'))!;
    const effect = { id: syncReplies[0]!.id, type: 'thread.reply' as const, kind: 'sync-retrying' as const, stage: 'prod', needsPerson: true, detail: syncReplies[0]!.detail };
    const first = renderReply(effect, record).blocks[0];
    const text = first?.type === 'section' ? first.text.text : '';
    expect(text).toContain('Argo CD sync attempt 1 of 3 failed');
    expect(text).toContain('admission webhook');
  });
});
