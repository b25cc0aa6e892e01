/**
 * A real Glidepath (`facts: watch`) watching a cluster whose API server ignores labelSelector
 * (issue 20, row 3): 20,000 Rollouts the stage does not select, and one it does. Only the selected
 * one becomes a fact, the rest are counted and logged once, the event loop keeps turning while
 * the pages are processed, and the watch lease (2 s here) is never lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { factsOfJob } from '../../src/facts/fact-batches.js';
import type { Glidepath } from '../../src/glidepath.js';
import { namespaceManifest, rolloutManifest } from '../../sandbox/kube/builders.js';
import { ResourceRegistry } from '../../sandbox/kube/resources.js';
import { startKubeServer, type KubeServer } from '../../sandbox/kube/server.js';
import { ObjectStore } from '../../sandbox/kube/store.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';

const SELECTED = { 'app.kubernetes.io/part-of': 'checkout', env: 'prod' };
const STRANGERS = 20_000;
const PAGE = 500;

let server: KubeServer | undefined;
let app: Glidepath | undefined;
let prefix: string | undefined;
let kubeconfigPath: string | undefined;

afterEach(async () => {
  await app?.close();
  await server?.close();
  if (prefix) await dropPrefix(prefix);
  if (kubeconfigPath) rmSync(dirname(kubeconfigPath), { recursive: true, force: true });
  app = server = prefix = kubeconfigPath = undefined;
});

/** A Rollout as an API server serves it (uid, version, generation): a valid fact, so only the selector can refuse it. */
const rollout = (name: string, labels: Record<string, string>) => {
  const m = rolloutManifest({ namespace: 'shop', name, image: `registry.example.com/shop/${name}:1.0.0`, labels, annotations: { 'hangar.io/release-id': `rel-${name}` } });
  return { ...m, metadata: { ...m.metadata, uid: `uid-${name}`, resourceVersion: '7', generation: 1, creationTimestamp: '2026-08-20T09:00:00Z' } };
};

async function metricValue(a: Glidepath, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await a.metrics.registry.getSingleMetric(name)!.get();
  return metric.values.filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value)).reduce((sum, v) => sum + v.value, 0);
}

/** A stand-in API server with the shop and argocd namespaces, and a kubeconfig for Glidepath's account. */
async function startServer(): Promise<{ store: ObjectStore; server: KubeServer }> {
  const store = new ObjectStore(new ResourceRegistry());
  for (const ns of ['shop', 'argocd']) store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest(ns));
  server = await startKubeServer({ store, users: USERS, bookmarkIntervalMs: 500 });
  kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'glidepath-hostile-')), 'kubeconfig');
  server.writeKubeconfig(kubeconfigPath, 'prod', 'glidepath');
  return { store, server };
}

/** A Glidepath watching that server for the checkout pipeline (`settings`: YAML flow entries), its log lines kept. */
function watchingConfig(settings: string) {
  const lines: { msg: string; [k: string]: unknown }[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
  const config = parseConfigFile(`
settings: { ${settings} }
clusters:
  - { name: prod, kubeconfigPath: ${kubeconfigPath}, kubeconfigContext: prod, facts: watch }
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod" } }
`);
  const env = testEnv();
  prefix = env.REDIS_PREFIX;
  return { lines, logger, config, env };
}

describe('watch source against a watch stream that never sends a newline', () => {
  it('ends that watch at the line cap with a warning and a metric, keeps its lease, and hears the next change', async () => {
    const { store, server } = await startServer();
    const rt = store.registry.byKind('Rollout', 'argoproj.io');
    store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.0.0', labels: SELECTED, annotations: { 'hangar.io/release-id': 'rel-1' } }));
    // The first Rollouts watch streams 8 MiB with no newline, 64 KiB at a time, until the client hangs up.
    let sent = 0;
    server.hostile = (r, { res, watch }) => {
      if (!watch || r.resource !== 'rollouts' || sent > 0) return false;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = (): void => {
        while (!res.destroyed && sent < 8 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => (sent = Math.max(sent, 1)));
      more();
      return true;
    };
    const { lines, logger, config, env } = watchingConfig('watchLeaseSeconds: 2, watchMaxLineMiB: 1');
    const a = (app = await startTestGlidepath(config, env, { logger }));
    await waitFor(async () => (await metricValue(a, 'glidepath_watch_streams_cut_total', { reason: 'line_too_long' })) >= 1 || undefined, 'the endless line cut');
    // Cut near the cap, not read to the end: the server had not sent its 8 MiB when the client hung up.
    expect(sent).toBeLessThan(8 * 1024 * 1024);
    expect(lines.filter((l) => l.level === 40 && String(l.msg).startsWith('a watch stream sent a line over the cap'))).toHaveLength(1);
    // The next change is heard on the resumed watch.
    const before = await metricValue(a, 'glidepath_facts_accepted_total', { source: 'watch' });
    store.patch(rt, 'shop', 'checkout', 'merge', { metadata: { annotations: { 'hangar.io/release-id': 'rel-2' } } });
    await waitFor(async () => (await metricValue(a, 'glidepath_facts_accepted_total', { source: 'watch' })) > before || undefined, 'the next change queued');
    expect(a.watchSource!.held()).toEqual(['prod']);
  }, 60_000);
});

describe('watch source against an API server that ignores labelSelector', () => {
  it('queues only the selected Rollout of 20,000, keeps the loop turning and keeps its lease', async () => {
    const { store, server } = await startServer();

    // The pages are serialised before the clock starts: the stand-in runs in this process too.
    const items = Array.from({ length: STRANGERS }, (_, i) => rollout(`stranger-${i}`, { 'app.kubernetes.io/part-of': 'other', env: 'prod' }));
    items.splice(STRANGERS / 2, 0, rollout('checkout', SELECTED));
    // Selected but not a Rollout Glidepath can read: a warning, once a minute per scope, not once each.
    for (let i = 0; i < 3; i++) items.push({ ...rollout(`broken-${i}`, SELECTED), spec: 'not a spec' } as unknown as (typeof items)[number]);
    const rv = store.resourceVersion();
    const pages: string[] = [];
    for (let at = 0, p = 0; at < items.length; at += PAGE, p++) {
      const more = at + PAGE < items.length;
      pages.push(JSON.stringify({ apiVersion: 'argoproj.io/v1alpha1', kind: 'RolloutList', metadata: { resourceVersion: rv, ...(more ? { continue: String(p + 1) } : {}) }, items: items.slice(at, at + PAGE) }));
    }
    let pagesServed = 0;
    server.hostile = (r, { res, url, watch }) => {
      if (watch || r.verb !== 'list' || r.resource !== 'rollouts') return false;
      const text = pages[Number(url.searchParams.get('continue') ?? '0')]!;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      pagesServed++;
      return true;
    };

    const { lines, logger, config, env } = watchingConfig('watchLeaseSeconds: 2, watchResyncMinutes: 10');

    let last = Date.now();
    let maxGapMs = 0;
    const ticker = setInterval(() => {
      const at = Date.now();
      if (pagesServed > 0) maxGapMs = Math.max(maxGapMs, at - last);
      last = at;
    }, 20);
    try {
      const started = (app = await startTestGlidepath(config, env, { logger }));
      await waitFor(async () => (await metricValue(started, 'glidepath_facts_rejected_total', { reason: 'outside_selector' })) === STRANGERS || undefined, 'every stranger refused', 60_000);
      await waitFor(async () => (await metricValue(started, 'glidepath_facts_accepted_total', { source: 'watch' })) >= 1 || undefined, 'the selected Rollout queued');
    } finally {
      clearInterval(ticker);
    }
    if (process.env.MEASURE) console.log(`[measure] ${STRANGERS} unselected Rollouts in ${pages.length} pages: max event-loop gap ${maxGapMs} ms`);
    const a = app;
    expect(pagesServed).toBe(pages.length);
    expect(await metricValue(a, 'glidepath_facts_accepted_total', { source: 'watch' })).toBe(1);
    const jobs = await a.facts.queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized']);
    expect(jobs.flatMap((j) => factsOfJob(j)).map(({ fact }) => `${fact.kind} ${'target' in fact ? fact.target.name : ''}`)).toEqual(['rollout checkout']);
    // Refused in one log line with the count, not 20,000 lines.
    const refusedLines = lines.filter((l) => l.msg.startsWith('the API server sent objects outside the watched scope'));
    expect(refusedLines).toHaveLength(1);
    expect(refusedLines[0]).toMatchObject({ cluster: 'prod', kind: 'Rollout', how: 'list', refused: { outside_selector: STRANGERS } });
    const invalid = lines.filter((l) => l.msg === 'watched object is not a valid fact');
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ cluster: 'prod', kind: 'Rollout', count: 1 });
    expect(String(invalid[0]!.path)).toMatch(/spec/);
    expect(await metricValue(a, 'glidepath_facts_rejected_total', { reason: 'invalid_object' })).toBe(3);
    // Let a renewal or two run (every ttl/3): a lease that lapsed while the loop was blocked is found lost there.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The lease was taken once and never lost (a blocked loop misses its renewal and the lease changes hands).
    expect(a.watchSource!.held()).toEqual(['prod']);
    expect(lines.filter((l) => l.msg === 'watching the cluster (lease held)')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'stopped watching the cluster' || l.msg === 'lease lost')).toHaveLength(0);
    expect(maxGapMs).toBeLessThan(1_000);
  }, 90_000);
});
