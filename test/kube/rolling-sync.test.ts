import { afterEach, describe, expect, it } from 'vitest';
import { checkFreshness, refreshAndWait } from '../../src/kube/freshness-reader.js';
import { syncRollingSyncStep } from '../../src/kube/rolling-sync.js';
import { advanceUntil, annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from './argo-world.js';
import { completed, refusal } from './support.js';

let w: ArgoWorld;
afterEach(() => w.stop());

async function refreshEverything(): Promise<void> {
  const api = w.clusters.api('prod');
  const snapshot = await checkFreshness(api, 'argocd', 'checkout', { now: () => w.clock.now() });
  let done = false;
  const waiting = refreshAndWait(api, 'argocd', snapshot, { timeoutMs: 20_000, now: () => w.clock.now() }).finally(() => (done = true));
  await advanceUntil(w, () => done);
  expect((await waiting).report.stale).toEqual([]);
}

describe('syncRollingSyncStep', () => {
  it('syncs the gated step as the ApplicationSet controller would, pinned to the approved revision, and the step goes Healthy', async () => {
    w = await startArgoWorld({ maxUpdate: [undefined, undefined, 0] });
    await w.clock.advance(150_000);
    expect(w.entry('prod').status).toBe('Waiting');
    const sha = w.git.resolve(REPO, 'main')!;

    const result = await completed(syncRollingSyncStep(w.clusters.api('prod'), 'argocd', 'checkout', 3, sha, { initiatedBy: 'glidepath:U0ALICE', now: () => w.clock.now() }));
    expect(result).toMatchObject({ synced: ['checkout-prod'], skipped: [], failed: [] });
    const op = w.app('checkout-prod').operation as any;
    expect(op).toMatchObject({
      initiatedBy: { username: 'glidepath:U0ALICE', automated: false },
      sync: { revision: sha, prune: true },
      retry: { limit: 5 },
      info: [{ name: 'Reason', value: 'RollingSync step 3 of ApplicationSet checkout approved through Glidepath by glidepath:U0ALICE' }],
    });
    await w.clock.advance(10_000);
    expect(w.entry('prod')).toMatchObject({ status: 'Healthy', targetRevisions: [sha] });
    expect(w.image('prod')).toBe('registry.example.com/shop/checkout:1.28.0');
  });

  it('refuses on stale state with the stale list, and — under the stale-cache fault — refuses while an earlier step is not Healthy at the revision', async () => {
    w = await startArgoWorld({ staleCache: true, maxUpdate: [undefined, undefined, 0] });
    await w.clock.advance(150_000);
    const sha = w.git.commit(REPO, 'main', tree('1.29.0'));
    annotateRefresh(w, 'dev');
    await w.clock.advance(1000);
    const api = w.clusters.api('prod');

    const stale = await refusal(syncRollingSyncStep(api, 'argocd', 'checkout', 3, sha, { now: () => w.clock.now() }));
    expect(stale.kind).toBe('refused');
    expect(stale.details.stale.map((s: { name: string }) => s.name)).toEqual(['checkout-prod', 'checkout-staging']);
    expect(stale.reason).toMatch(/^Not approving step 3 of checkout: 2 of its Applications are not fresh \(checkout-prod: reconciledAt \d+ s before the latest transition; checkout-staging: .*\); refresh them and approve again; nothing was changed$/);

    await refreshEverything();
    // The ApplicationSet, reading a stale cache, calls staging Healthy although it never synced.
    expect(w.entry('staging')).toMatchObject({ status: 'Healthy', targetRevisions: [sha] });
    const early = await refusal(syncRollingSyncStep(api, 'argocd', 'checkout', 3, sha, { now: () => w.clock.now() }));
    expect(early.kind).toBe('refused');
    expect(early.reason).toContain(`earlier steps are not Healthy at ${sha.slice(0, 7)}`);
    expect(early.reason).toContain(`step 2: checkout-staging is OutOfSync/Healthy at ${sha.slice(0, 7)}`);
    expect(w.app('checkout-prod').operation).toBeUndefined();
  });

  it('a sync someone else started between the read and the sync is a conflict for that app, which is then not synced by Glidepath', async () => {
    w = await startArgoWorld({ maxUpdate: [undefined, undefined, 0] });
    await w.clock.advance(150_000);
    const sha = w.git.resolve(REPO, 'main')!;
    let raced = false;
    w.server.onRequest = (req) => {
      if (raced || req.verb !== 'patch' || req.resource !== 'applications') return;
      raced = true;
      w.store.patch(w.store.registry.byKind('Application'), 'argocd', 'checkout-prod', 'merge', { operation: { initiatedBy: { username: 'admin' }, sync: { revision: sha } } });
    };
    const result = await completed(syncRollingSyncStep(w.clusters.api('prod'), 'argocd', 'checkout', 3, sha, { now: () => w.clock.now() }));
    expect(result.synced).toEqual([]);
    expect(result.failed.map((f) => [f.name, f.error.kind, f.error.message])).toEqual([
      ['checkout-prod', 'conflict', 'checkout-prod changed while you clicked; it was not synced: look at step 3 again'],
    ]);
    // Whatever operation it has is the other person's: Glidepath sent none over it.
    expect(JSON.stringify(w.app('checkout-prod').operation ?? {})).not.toContain('RollingSync step 3');
  });

  it('a status write between the read and the sync (Argo CD reconciling) is no change of what was approved: the sync goes through', async () => {
    w = await startArgoWorld({ maxUpdate: [undefined, undefined, 0] });
    await w.clock.advance(150_000);
    const sha = w.git.resolve(REPO, 'main')!;
    let raced = 0;
    w.server.onRequest = (req) => {
      if (raced > 0 || req.verb !== 'patch' || req.resource !== 'applications') return;
      raced += 1;
      w.store.patch(w.store.registry.byKind('Application'), 'argocd', 'checkout-prod', 'merge', { status: { reconciledAt: new Date(w.clock.now()).toISOString() } });
    };
    const result = await completed(syncRollingSyncStep(w.clusters.api('prod'), 'argocd', 'checkout', 3, sha, { now: () => w.clock.now() }));
    expect(raced).toBe(1);
    expect(result).toMatchObject({ synced: ['checkout-prod'], failed: [] });
    expect(w.app('checkout-prod').operation).toMatchObject({ sync: { revision: sha } });
  });
});
