import { afterEach, describe, expect, it } from 'vitest';
import { judgeFreshness, progressText } from '../../src/kube/freshness.js';
import { checkFreshness, refreshAndWait, waitFresh } from '../../src/kube/freshness-reader.js';
import { applicationCoreSchema } from '../../src/model/application.js';
import { applicationSetSchema } from '../../src/model/application-set.js';
import { advanceUntil, annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from './argo-world.js';

const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);

function appSet(entries: { application: string; lastTransitionTime: string; targetRevisions: string[] }[]) {
  return applicationSetSchema.parse({
    metadata: { name: 'shop', namespace: 'argocd', uid: 'u-1', resourceVersion: '1' },
    status: { applicationStatus: entries.map((e) => ({ ...e, status: 'Healthy', step: '1', message: '' })) },
  });
}

function child(name: string, fields: { reconciledAt?: string; revision?: string; annotations?: Record<string, string>; owner?: string }) {
  return applicationCoreSchema.parse({
    metadata: {
      name,
      namespace: 'argocd',
      resourceVersion: '2',
      annotations: fields.annotations ?? {},
      ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: fields.owner ?? 'shop', uid: 'u-1', controller: true }],
    },
    status: { reconciledAt: fields.reconciledAt, sync: { status: 'Synced', revision: fields.revision } },
  });
}

describe('freshness (pure)', () => {
  const set = appSet([
    { application: 'a', lastTransitionTime: '2026-08-20T10:00:00Z', targetRevisions: [SHA_A] },
    { application: 'b', lastTransitionTime: '2026-08-20T10:02:00Z', targetRevisions: [SHA_B] },
    { application: 'c', lastTransitionTime: '2026-08-20T09:00:00Z', targetRevisions: [SHA_B] },
    { application: 'd', lastTransitionTime: '2026-08-20T09:00:00Z', targetRevisions: [SHA_B] },
  ]);
  const now = Date.parse('2026-08-20T10:05:00Z');

  it('anchors on the LATEST transition, needs no pending refresh and the target revisions; each stale child says why', () => {
    const report = judgeFreshness(
      set,
      [
        // Reconciled after the earliest transition but 40 s before the latest one: stale.
        child('a', { reconciledAt: '2026-08-20T10:01:20Z', revision: SHA_A }),
        child('b', { reconciledAt: '2026-08-20T10:02:00Z', revision: SHA_B }),
        child('c', { reconciledAt: '2026-08-20T10:03:00Z', revision: SHA_A }),
        child('d', { reconciledAt: '2026-08-20T10:03:00Z', revision: SHA_B, annotations: { 'argocd.argoproj.io/refresh': 'normal', 'argocd.argoproj.io/refresh-timestamp': '2026-08-20T10:03:00Z' } }),
        // Not a child: owned by another ApplicationSet.
        child('x', { reconciledAt: '2026-08-20T09:00:00Z', revision: SHA_A, owner: 'other' }),
      ],
      now,
    );
    expect(report.latestTransition).toBe('2026-08-20T10:02:00Z');
    expect(report.children.map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(report.stale).toEqual([
      { name: 'a', fresh: false, reason: 'reconciledAt 40 s before the latest transition' },
      { name: 'c', fresh: false, reason: 'revision aaaaaaa ≠ target bbbbbbb' },
      { name: 'd', fresh: false, reason: 'refresh pending for 2m' },
    ]);
    expect(progressText(report)).toBe('1/4 fresh');
  });
});

describe('freshness against the Argo CD simulators', () => {
  let w: ArgoWorld;
  afterEach(() => w.stop());

  it("the ApplicationSet's stale-cache fault: the check reports stale children until they are refreshed, then all fresh, followed on a watch", async () => {
    w = await startArgoWorld({ staleCache: true });
    // Past the first periodic reconcile (120 s), every child has reconciled since the last transition.
    await w.clock.advance(150_000);
    const api = w.clusters.api('prod');
    expect((await checkFreshness(api, 'argocd', 'checkout', { now: () => w.clock.now() })).report.stale).toEqual([]);

    // A commit; only dev notices it (a refresh). With its stale cache the ApplicationSet marks
    // dev Healthy at the old state and believes the whole rollout is complete.
    const sha = w.git.commit(REPO, 'main', tree('1.29.0'));
    annotateRefresh(w, 'dev');
    await w.clock.advance(1000);
    expect(w.entry('dev')).toMatchObject({ status: 'Healthy', targetRevisions: [sha] });
    expect(w.appSet().status.conditions.find((c: { type: string }) => c.type === 'RolloutProgressing')).toMatchObject({ status: 'False' });
    expect(w.image('staging')).toBe('registry.example.com/shop/checkout:1.28.0');

    const snapshot = await checkFreshness(api, 'argocd', 'checkout', { now: () => w.clock.now() });
    expect(snapshot.report.stale).toEqual([
      { name: 'checkout-prod', fresh: false, reason: expect.stringMatching(/^reconciledAt \d+ s before the latest transition$/) },
      { name: 'checkout-staging', fresh: false, reason: expect.stringMatching(/^reconciledAt \d+ s before the latest transition$/) },
    ]);
    expect(progressText(snapshot.report)).toBe('1/3 fresh');

    const progress: string[] = [];
    const watchesBefore = w.server.requestCounts.get('watch applications') ?? 0;
    const waiting = refreshAndWait(api, 'argocd', snapshot, { timeoutMs: 20_000, now: () => w.clock.now(), onProgress: (p) => progress.push(p.text) });
    let result: Awaited<typeof waiting> | undefined;
    let failure: unknown;
    void waiting.then((r) => (result = r), (err: unknown) => (failure = err));
    await advanceUntil(w, () => result !== undefined || failure !== undefined);
    expect(failure).toBeUndefined();
    expect(result).toBeDefined();
    expect(result!.timedOut).toBe(false);
    expect(result!.report.stale).toEqual([]);
    expect(result!.refreshed.requested).toEqual(['checkout-prod', 'checkout-staging']);
    expect(progress.at(-1)).toBe('3/3 fresh');
    expect((w.server.requestCounts.get('watch applications') ?? 0) - watchesBefore).toBe(1);
    // Fresh now means: every child has compared against the new commit.
    for (const env of ['dev', 'staging', 'prod']) expect(w.app(`checkout-${env}`).status.sync.revision).toBe(sha);
  });

  it('when the watch version has been compacted away (410 Gone) it lists again and carries on', async () => {
    // Every step gated: the ApplicationSet syncs nothing, so no rollout moves the latest transition on.
    w = await startArgoWorld({ maxUpdate: [0, 0, 0] });
    await w.clock.advance(150_000);
    const api = w.clusters.api('prod');
    w.git.commit(REPO, 'main', tree('1.29.0'));
    annotateRefresh(w, 'dev');
    await w.clock.advance(1000);
    const snapshot = await checkFreshness(api, 'argocd', 'checkout', { now: () => w.clock.now() });
    expect(snapshot.report.stale.length).toBe(2);
    // Someone else asks for a refresh, then etcd compacts: the snapshot's version is gone.
    annotateRefresh(w, 'prod');
    w.store.compact();
    const listsBefore = w.server.requestCounts.get('list applications') ?? 0;
    let done = false;
    const waiting = refreshAndWait(api, 'argocd', snapshot, { timeoutMs: 20_000, now: () => w.clock.now() }).finally(() => (done = true));
    await advanceUntil(w, () => done);
    const result = await waiting;
    expect(result.report.stale).toEqual([]);
    expect((w.server.requestCounts.get('list applications') ?? 0) - listsBefore).toBe(1);
    expect(w.server.requestCounts.get('watch applications')).toBe(2);
  });

  it('gives up at the timeout and reports who is still stale', async () => {
    w = await startArgoWorld();
    await w.clock.advance(30_000);
    const api = w.clusters.api('prod');
    w.git.commit(REPO, 'main', tree('1.29.0'));
    annotateRefresh(w, 'dev');
    await w.clock.advance(1000);
    const snapshot = await checkFreshness(api, 'argocd', 'checkout', { now: () => w.clock.now() });
    expect(snapshot.report.stale.length).toBeGreaterThan(0);
    // No refresh asked and the clock stands still: nothing can become fresh.
    const result = await waitFresh(api, 'argocd', snapshot, { timeoutMs: 300, now: () => w.clock.now() });
    expect(result.timedOut).toBe(true);
    expect(result.report.stale.map((s) => s.name)).toEqual(snapshot.report.stale.map((s) => s.name));
  });
});
