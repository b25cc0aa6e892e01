/**
 * npm run bench:freshness — an ApplicationSet with 2,000 children in the stand-in API server.
 * 1. Time of a freshness check (GET ApplicationSet + paginated LIST + judgement) against a bare
 *    paginated LIST of the same Applications with client-node, alternated in the same run.
 * 2. `--refresh` path: a tenth of the children are stale; a simulated Argo CD reconciles each
 *    refreshed child after a delay. Requests are counted at the stand-in: the target is one patch
 *    per stale child + the LISTs + one watch (+ the ApplicationSet GETs), no polling.
 * Last line: one JSON object with the numbers.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { DEFAULT_PAGE_SIZE } from '../src/kube/api.js';
import { ClusterClients } from '../src/kube/clusters.js';
import { REFRESH_ANNOTATION, progressText } from '../src/kube/freshness.js';
import { checkFreshness, refreshAndWait } from '../src/kube/freshness-reader.js';
import { ADMIN_RULES, type PolicyRule } from '../sandbox/kube/auth.js';
import { isoSeconds } from '../sandbox/kube/clock.js';
import { startStandInCluster } from '../sandbox/kube/stand-in.js';
import { loadAtStart, loadAverages } from './lib/load.js';

const APPS = Number(process.env.BENCH_APPS ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const STALE_EVERY = 10;
const RECONCILE_DELAY_MS = Number(process.env.BENCH_RECONCILE_DELAY_MS ?? 300);
const NS = 'argocd';
const SHA = 'c0ffee0123456789abcdef0123456789abcdef01';

const rbac = parse(readFileSync(new URL('../deploy/rbac/glidepath-clusterrole.yaml', import.meta.url), 'utf8')) as { rules: PolicyRule[] };
const standIn = await startStandInCluster({
  name: 'bench',
  users: [{ name: 'glidepath', token: 'glidepath-token', rules: rbac.rules }, { name: 'admin', token: 'admin-token', rules: ADMIN_RULES }],
  namespaces: [NS],
  historyLimit: APPS * 4,
});
const { store, server } = standIn;
const kubeconfigPath = standIn.kubeconfigPath!;
const appRt = store.registry.byKind('Application', 'argoproj.io');
const appSetRt = store.registry.byKind('ApplicationSet', 'argoproj.io');

const now = Date.now();
const latestTransition = isoSeconds(now - 60_000);
const name = (i: number): string => `shop-${String(i).padStart(4, '0')}`;
const appSet = store.create(appSetRt, NS, {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name: 'shop' },
  spec: { generators: [], template: { metadata: {}, spec: { project: 'default', destination: {}, source: { repoURL: 'https://git.example.com/shop.git' } } }, strategy: { type: 'RollingSync', rollingSync: { steps: [] } } },
});
store.patch(
  appSetRt,
  NS,
  'shop',
  'merge',
  {
    status: {
      applicationStatus: Array.from({ length: APPS }, (_, i) => ({
        application: name(i),
        status: 'Healthy',
        step: '1',
        message: 'Application resource became Healthy, updating status from Progressing to Healthy',
        lastTransitionTime: i === 0 ? latestTransition : isoSeconds(now - 600_000),
        targetRevisions: [SHA],
      })),
    },
  },
  { subresource: 'status' },
);
const owner = { apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: 'shop', uid: appSet.metadata.uid!, controller: true, blockOwnerDeletion: true };
for (let i = 0; i < APPS; i++) {
  store.create(appRt, NS, {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: name(i), labels: { env: `e${i % 20}` }, ownerReferences: [owner] },
    spec: { project: 'default', source: { repoURL: 'https://git.example.com/shop.git', targetRevision: 'main', path: `apps/${i}` }, destination: { server: 'https://kubernetes.default.svc', namespace: `shop-${i}` } },
  });
  const reconciledAt = isoSeconds(i % STALE_EVERY === 1 ? now - 120_000 : now - 30_000);
  store.mutate(appRt, NS, name(i), (a) => void (a.status = { reconciledAt, sync: { status: 'Synced', revision: SHA }, health: { status: 'Healthy' } }));
}

/** A stand-in for Argo CD's application controller: a refresh is honoured after a delay, in two writes. */
store.subscribe((e) => {
  if (e.rt !== appRt || e.object.metadata.annotations?.[REFRESH_ANNOTATION] === undefined || e.old?.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined) return;
  const app = e.object.metadata.name;
  setTimeout(() => {
    store.mutate(appRt, NS, app, (a) => void (a.status.reconciledAt = isoSeconds(Date.now())));
    store.patch(appRt, NS, app, 'json', [{ op: 'remove', path: `/metadata/annotations/${REFRESH_ANNOTATION.replace('/', '~1')}` }]);
  }, RECONCILE_DELAY_MS * (0.5 + Math.random()));
});

const clusters = new ClusterClients([{ name: 'bench', kubeconfigPath, kubeconfigContext: 'bench' }], { requestTimeoutMs: 30_000 });
const api = clusters.api('bench');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
const bare = kc.makeApiClient(CustomObjectsApi);

async function baselineList(): Promise<number> {
  let token: string | undefined;
  let count = 0;
  do {
    const page = (await bare.listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', namespace: NS, limit: DEFAULT_PAGE_SIZE, _continue: token })) as { items: unknown[]; metadata: { continue?: string } };
    count += page.items.length;
    token = page.metadata.continue || undefined;
  } while (token);
  return count;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const freshnessTimes: number[] = [];
const baselineTimes: number[] = [];
for (let run = 0; run < RUNS + 3; run++) {
  const t0 = performance.now();
  const snapshot = await checkFreshness(api, NS, 'shop');
  const t1 = performance.now();
  const listed = await baselineList();
  const t2 = performance.now();
  if (snapshot.report.children.length !== APPS || listed !== APPS) throw new Error(`expected ${APPS} apps, got ${snapshot.report.children.length} / ${listed}`);
  if (run >= 3) {
    freshnessTimes.push(t1 - t0);
    baselineTimes.push(t2 - t1);
  }
}
const freshnessMs = median(freshnessTimes);
const baselineListMs = median(baselineTimes);
console.log(`freshness check of ${APPS} children: median ${freshnessMs.toFixed(1)} ms; bare paginated LIST: median ${baselineListMs.toFixed(1)} ms (${RUNS} runs each, alternated)`);
const counted = async (work: () => Promise<unknown>): Promise<string> => {
  const start = new Map(server.requestCounts);
  await work();
  return JSON.stringify(Object.fromEntries([...server.requestCounts].map(([k, n]) => [k, n - (start.get(k) ?? 0)] as const).filter(([, n]) => n > 0)));
};
console.log(`requests per check: ${await counted(() => checkFreshness(api, NS, 'shop'))}; per bare LIST: ${await counted(baselineList)}`);

// --refresh
const before = new Map(server.requestCounts);
const snapshot = await checkFreshness(api, NS, 'shop');
const stale = snapshot.report.stale.length;
console.log(`stale before refresh: ${stale} (${progressText(snapshot.report)}), e.g. ${snapshot.report.stale[0]?.name}: ${snapshot.report.stale[0]?.reason}`);
let lastShown = snapshot.report.freshCount;
const t0 = performance.now();
const result = await refreshAndWait(api, NS, snapshot, {
  timeoutMs: 60_000,
  onProgress: (p) => {
    if (p.fresh - lastShown >= stale / 4 || p.fresh === p.total) {
      lastShown = p.fresh;
      console.log(`  ${p.text}`);
    }
  },
});
const refreshMs = performance.now() - t0;
const delta = (key: string): number => (server.requestCounts.get(key) ?? 0) - (before.get(key) ?? 0);
const requests: Record<string, number> = Object.fromEntries([...server.requestCounts.keys()].map((k) => [k, delta(k)] as const).filter(([, n]) => n > 0));
const refreshRequests = Object.values(requests).reduce((a, b) => a + b, 0);
const listPages = Math.ceil(APPS / DEFAULT_PAGE_SIZE);
const appSetGets = 2; // the check's read, and one confirmation once the children are fresh
const minimumRequests = stale + listPages + 1 + appSetGets;
console.log(`refresh: ${result.refreshed.requested.length} refreshed, ${result.refreshedAgain.length} refreshed again, fresh in ${refreshMs.toFixed(0)} ms (reconcile delay ${RECONCILE_DELAY_MS} ms ± 50%), timedOut=${result.timedOut}`);
console.log(`requests: ${JSON.stringify(requests)}`);
if (result.timedOut || result.report.stale.length > 0) throw new Error('the refresh did not make every child fresh');

await standIn.stop();
console.log(
  JSON.stringify({
    bench: 'freshness',
    apps: APPS,
    freshnessMs: Number(freshnessMs.toFixed(1)),
    baselineListMs: Number(baselineListMs.toFixed(1)),
    ratio: Number((freshnessMs / baselineListMs).toFixed(2)),
    refreshRequests,
    minimumRequests,
    loadStart: loadAtStart,
    loadEnd: loadAverages(),
  }),
);
process.exit(0);
