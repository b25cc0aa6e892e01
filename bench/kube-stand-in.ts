/**
 * Throughput of the stand-in API server, for the numbers in the sandbox notes:
 * `npx tsx bench/kube-stand-in.ts`. Measures CRD loading, in-process writes with schema
 * validation (Rollout, the 1.4 MB-schema ApplicationSet), listing, and client-node over HTTPS.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ADMIN_RULES } from '../sandbox/kube/auth.js';
import { rolloutManifest } from '../sandbox/kube/builders.js';
import { ResourceRegistry } from '../sandbox/kube/resources.js';
import { startStandInCluster } from '../sandbox/kube/stand-in.js';

function time<T>(label: string, n: number, fn: (i: number) => T): void {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`${label}: ${n} in ${ms.toFixed(0)} ms = ${((n / ms) * 1000).toFixed(0)}/s (${((ms / n) * 1000).toFixed(0)} µs each)`);
}

const t0 = Date.now();
const registry = new ResourceRegistry();
console.log(`load and parse sandbox/kube/crds: ${Date.now() - t0} ms`);
// The server listens from here on; the in-process timings below do not go through it.
const standIn = await startStandInCluster({
  name: 'bench',
  users: [{ name: 'admin', token: 't', rules: ADMIN_RULES }],
  registry,
  historyLimit: 1000,
  namespaces: ['shop', 'argocd'],
  scheme: process.env.BENCH_SCHEME === 'http' ? 'http' : 'https',
});
const { store, server } = standIn;
const ro = registry.byKind('Rollout');
time('create Rollout (validated)', 2000, (i) => store.create(ro, 'shop', rolloutManifest({ namespace: 'shop', name: `r-${i}`, image: `img:${i}`, labels: { n: String(i % 10) } })));
time('merge-patch Rollout spec', 5000, (i) => store.patch(ro, 'shop', `r-${i % 2000}`, 'merge', { spec: { replicas: (i % 7) + 1 } }));
time('status write Rollout', 5000, (i) =>
  store.patch(ro, 'shop', `r-${i % 2000}`, 'merge', { status: { phase: i % 2 ? 'Healthy' : 'Paused', observedGeneration: String(i) } }, { subresource: 'status' }),
);
const appSet = registry.byKind('ApplicationSet');
store.create(appSet, 'argocd', {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name: 'checkout' },
  spec: {
    generators: [{ list: { elements: Array.from({ length: 50 }, (_, i) => ({ env: `e${i}` })) } }],
    strategy: { type: 'RollingSync', rollingSync: { steps: [{ matchExpressions: [{ key: 'env', operator: 'In', values: ['e1'] }] }] } },
    template: {
      metadata: { name: 'c-{{env}}' },
      spec: { project: 'default', source: { repoURL: 'https://git.example.com/x.git', path: '{{env}}' }, destination: { namespace: 'shop', server: 'https://kubernetes.default.svc' } },
    },
  },
});
time('status write ApplicationSet (50 applicationStatus entries)', 2000, (i) =>
  store.mutate(
    appSet,
    'argocd',
    'checkout',
    (o) => {
      o.status = { applicationStatus: Array.from({ length: 50 }, (_, k) => ({ application: `c-e${k}`, status: 'Waiting', step: '1', message: `m${i}`, targetRevisions: ['abc'] })) };
    },
    { subresource: 'status' },
  ),
);
time('list 2000 Rollouts with a label selector', 200, () => store.list(ro, 'shop', { labelSelector: 'n in (1,2)' }));

const api = standIn.kubeConfig().makeApiClient(CustomObjectsApi);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const n = 1000;
let start = Date.now();
for (let i = 0; i < n; i++) {
  await api.patchNamespacedCustomObjectStatus(
    { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop', name: `r-${i % 2000}`, body: { status: { abort: i % 2 === 0 } } },
    merge,
  );
}
let ms = Date.now() - start;
console.log(`client-node status merge patch over ${server.scheme}, sequential: ${n} in ${ms} ms = ${((n / ms) * 1000).toFixed(0)}/s`);
start = Date.now();
let pages = 0;
let token: string | undefined;
do {
  const page = (await api.listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop', limit: 100, _continue: token })) as {
    metadata: { continue?: string };
  };
  token = page.metadata.continue;
  pages++;
} while (token);
ms = Date.now() - start;
console.log(`client-node paginated list of 2000 Rollouts (limit 100): ${pages} pages in ${ms} ms`);
await standIn.stop();
