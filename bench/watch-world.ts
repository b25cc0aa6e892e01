/**
 * The objects of bench/watch.ts and what selects them: Rollouts in `shop` and Argo CD Applications
 * in `argocd`, created with the status their controllers would have written (a healthy, finished
 * canary; a synced, healthy Application), then changed by status writes as a controller makes
 * them (ready replicas of a Rollout dip and recover; an Application's health flips while Argo CD
 * reconciles). Every write is timed by the resourceVersion it produced.
 */
import { configFileSchema, type ConfigFile } from '../src/config/file.js';
import { rolloutManifest } from '../sandbox/kube/builders.js';
import { isoSeconds } from '../sandbox/kube/clock.js';
import type { ObjectStore } from '../sandbox/kube/store.js';

export const BENCH_CLUSTER = 'bench';
export const PART_OF = 'app.kubernetes.io/part-of=bench';
/**
 * Release ids the objects carry (`hangar.io/release-id: rel-<i mod RELEASES>`): 100 releases of 20
 * Rollouts and 20 Applications each in flight at once. (1, one release over all 4,000 objects, is
 * far slower to reduce: every batch rewrites a 4,000-target record.)
 */
export const RELEASES = Number(process.env.BENCH_WATCH_RELEASES ?? 100);
const SHA = 'c0ffee0123456789abcdef0123456789abcdef01';

/** What the pipeline selects, and so what the informer baseline watches too (same selectors). */
export const WATCHED = [
  { plural: 'rollouts', namespace: 'shop', labelSelector: PART_OF },
  { plural: 'applications', namespace: 'argocd', labelSelector: PART_OF },
] as const;

export function benchConfig(kubeconfigPath: string): ConfigFile {
  return configFileSchema.parse({
    clusters: [{ name: BENCH_CLUSTER, kubeconfigPath, kubeconfigContext: BENCH_CLUSTER, facts: 'watch' }],
    pipelines: [
      {
        name: 'shop',
        channel: 'C0BENCHSHOP',
        stages: [
          { name: 'apps', cluster: BENCH_CLUSTER, applications: { namespace: 'argocd', selector: PART_OF } },
          { name: 'prod', cluster: BENCH_CLUSTER, rollouts: { namespace: 'shop', selector: PART_OF } },
        ],
      },
    ],
  });
}

const rolloutName = (i: number): string => `svc-${String(i).padStart(4, '0')}`;
const appName = (i: number): string => `app-${String(i).padStart(4, '0')}`;
const releaseOf = (i: number): Record<string, string> => ({ 'hangar.io/release-id': `rel-${i % RELEASES}` });

/** Creates `n` Rollouts and `n` Applications with a controller's status. */
export function createObjects(store: ObjectStore, n: number): void {
  const ro = store.registry.byKind('Rollout');
  const app = store.registry.byKind('Application', 'argoproj.io');
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const name = rolloutName(i);
    store.create(ro, 'shop', rolloutManifest({
      namespace: 'shop', name, image: `registry.example.com/shop/${name}:1.0.0`, replicas: 2,
      steps: [{ setWeight: 50 }, { pause: { duration: '1m' } }],
      labels: { 'app.kubernetes.io/part-of': 'bench' }, annotations: releaseOf(i),
    }));
    const hash = `7d9f${String(i).padStart(4, '0')}c`;
    store.patch(ro, 'shop', name, 'merge', {
      status: {
        phase: 'Healthy', message: '', observedGeneration: '1', currentPodHash: hash, stableRS: hash, currentStepIndex: 2,
        replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
        conditions: [{ type: 'Available', status: 'True', reason: 'AvailableReason', message: 'Rollout has minimum availability', lastTransitionTime: isoSeconds(now), lastUpdateTime: isoSeconds(now) }],
      },
    }, { subresource: 'status' });
    store.create(app, 'argocd', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: appName(i), labels: { 'app.kubernetes.io/part-of': 'bench' }, annotations: releaseOf(i) },
      spec: { project: 'default', source: { repoURL: 'https://git.example.com/shop.git', targetRevision: 'main', path: `apps/${i}` }, destination: { server: 'https://kubernetes.default.svc', namespace: `shop-${i}` } },
    });
    store.mutate(app, 'argocd', appName(i), (a) => {
      a.status = {
        reconciledAt: isoSeconds(now),
        sync: { status: 'Synced', revision: SHA },
        health: { status: 'Healthy' },
        operationState: { phase: 'Succeeded', message: 'successfully synced (all tasks run)', startedAt: isoSeconds(now - 60_000), finishedAt: isoSeconds(now - 50_000), operation: { sync: { revision: SHA } }, syncResult: { revision: SHA } },
      };
    });
  }
}

/**
 * Change number `k` (0-based) of the run: object k mod n, a Rollout for even rounds of k / n and
 * an Application for odd ones, alternating within a round. Returns the resourceVersion written.
 */
export function writeChange(store: ObjectStore, n: number, k: number): string {
  const i = Math.floor(k / 2) % n;
  const round = Math.floor(k / (2 * n));
  if (k % 2 === 0) {
    const ready = round % 2 === 0 ? 1 : 2;
    const written = store.patch(store.registry.byKind('Rollout'), 'shop', rolloutName(i), 'merge', { status: { readyReplicas: ready, availableReplicas: ready } }, { subresource: 'status' });
    return written.metadata.resourceVersion!;
  }
  const written = store.mutate(store.registry.byKind('Application', 'argoproj.io'), 'argocd', appName(i), (a) => {
    a.status.health = { status: round % 2 === 0 ? 'Progressing' : 'Healthy' };
    a.status.reconciledAt = isoSeconds(Date.now());
  });
  return written.metadata.resourceVersion!;
}
