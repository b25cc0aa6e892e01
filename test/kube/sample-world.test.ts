/**
 * The Kubernetes layer on the sandbox's sample world (two clusters, two Argo CD instances, a
 * RollingSync ApplicationSet with a gated last step, Kargo), with Glidepath running under exactly
 * the rules in deploy/rbac: a release is approved step by step to the end, and Freight promoted.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { KubeReads } from '../../src/kube/reads-by-cluster.js';
import { refreshAndWait } from '../../src/kube/freshness-reader.js';
import { promote } from '../../src/kube/kargo.js';
import { syncRollingSyncStep } from '../../src/kube/rolling-sync.js';
import { approveCanaryStep } from '../../src/kube/rollout-operations.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { ADMIN_RULES } from '../../sandbox/kube/auth.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { startSampleWorld, type SampleWorld } from '../../sandbox/kube/world.js';
import { completed, GLIDEPATH_RULES, refusal } from './support.js';

let world: SampleWorld;
afterEach(() => world.stop());

describe('the Kubernetes layer on the sample world, with the shipped RBAC', () => {
  it('approves a release through its canary pauses and the gated RollingSync step, and promotes Freight with Kargo', async () => {
    const clock = new FakeClock('2026-08-20T09:00:00Z');
    const kubeconfigPath = join(tempDir('glidepath-world-'), 'kubeconfig');
    world = await startSampleWorld({
      clock,
      kubeconfigPath,
      podReadyMs: 5000,
      users: [
        { name: 'glidepath', token: 'glidepath-token', rules: GLIDEPATH_RULES },
        { name: 'admin', token: 'admin-token', rules: ADMIN_RULES },
      ],
    });
    const clusters = new ClusterClients([
      { name: 'dev', kubeconfigPath, kubeconfigContext: 'dev' },
      { name: 'prod', kubeconfigPath, kubeconfigContext: 'prod', argocdNamespaces: ['argocd', 'argocd-apps'] },
    ]);
    const actions = new KubeReads(clusters);
    const prod = world.clusters.prod.store;
    const rollout = (name: string): KubeObject => prod.get(prod.registry.byKind('Rollout'), 'shop', name);
    const advanceUntil = async (done: () => boolean, stepMs = 5000, max = 200): Promise<void> => {
      for (let i = 0; i < max && !done(); i++) {
        await clock.advance(stepMs);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(done()).toBe(true);
    };
    const approve = async (name: string): Promise<void> => {
      const r = rollout(name);
      await approveCanaryStep(clusters.api('prod'), 'shop', name, { generation: r.metadata.generation!, podHash: r.status.currentPodHash, stepIndex: r.status.currentStepIndex });
    };
    const image = (name: string): string => rollout(name).spec.template.spec.containers[0].image;
    const pausedAt = (name: string, index: number) => () => rollout(name).status?.phase === 'Paused' && rollout(name).status?.currentStepIndex === index;
    const healthyAt = (name: string, version: string) => () => image(name).endsWith(`:${version}`) && rollout(name).status?.phase === 'Healthy';

    await advanceUntil(() => ['checkout-staging', 'checkout-eu', 'checkout-us'].every((n) => prod.tryGet(prod.registry.byKind('Rollout'), 'shop', n)?.status?.phase === 'Healthy'));
    const sha = world.releaseCheckout('1.29.0', 'rel-1.29.0');

    // Step 1 (staging): the canary waits for a person at its indefinite pause.
    await advanceUntil(pausedAt('checkout-staging', 1));
    await approve('checkout-staging');
    await advanceUntil(healthyAt('checkout-staging', '1.29.0'));
    // Step 2 (prod-eu) follows on its own, and pauses the same way.
    await advanceUntil(pausedAt('checkout-eu', 1));
    await approve('checkout-eu');
    await advanceUntil(healthyAt('checkout-eu', '1.29.0'));
    expect(image('checkout-us')).toBe('registry.example.com/shop/checkout:1.28.0');

    // Step 3 (prod-us) is the manual gate. While the children have not reconciled since the
    // latest step transition, approval is refused with the stale list; refresh, then approve.
    const refused = await refusal(syncRollingSyncStep(clusters.api('prod'), 'argocd', 'checkout', 3, sha));
    expect(refused.kind).toBe('refused');
    expect(refused.details.stale.map((s: { name: string }) => s.name)).toContain('checkout-prod-us');
    const snapshot = await actions.checkFreshness('prod', 'argocd', 'checkout');
    let done = false;
    const waiting = refreshAndWait(clusters.api('prod'), 'argocd', snapshot, { timeoutMs: 30_000 }).finally(() => (done = true));
    await advanceUntil(() => done, 500);
    expect((await waiting).report.stale).toEqual([]);
    const synced = await completed(syncRollingSyncStep(clusters.api('prod'), 'argocd', 'checkout', 3, sha, { initiatedBy: 'glidepath:U0ALICE' }));
    expect(synced.synced).toEqual(['checkout-prod-us']);
    await advanceUntil(pausedAt('checkout-us', 1));
    await approve('checkout-us');
    await advanceUntil(healthyAt('checkout-us', '1.29.0'));

    // Kargo on prod: the newest Freight for dev comes straight from the Warehouse.
    const freight = await actions.availableFreight('prod', 'kargo-checkout', 'dev');
    expect(freight.available.map((f) => f.freight.alias).sort()).toEqual(['brave-lynx', 'steady-otter']);
    const promoted = await completed(promote(clusters.api('prod'), 'kargo-checkout', 'dev', 'brave-lynx'));
    expect(promoted.name).toMatch(/^dev\.[0-9a-z]{26}\.[0-9a-f]{7}$/);
    let followed = false;
    const following = actions.followPromotion('prod', 'kargo-checkout', promoted.name, { timeoutMs: 30_000 }).finally(() => (followed = true));
    await advanceUntil(() => followed, 1000);
    expect((await following).phase).toBe('Succeeded');
  });
});
