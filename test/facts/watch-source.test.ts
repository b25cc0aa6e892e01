/**
 * The watch source against the stand-in API server (real client-node, real Redis, the Rollouts
 * simulator): a release followed to its end with no notification at all; with both on, every
 * observation is one job and no reply is doubled; a restarted API server that compacted its
 * history (410) is relisted and nothing is missed; a second replica takes over the lease of a
 * dead one.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { factsOfJob } from '../../src/facts/fact-batches.js';
import { parseConfigFile, type ConfigFile } from '../../src/config/file.js';
import { namespaceManifest, rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { NotificationsEngine } from '../../sandbox/kube/controllers/notifications.js';
import { RolloutsController } from '../../sandbox/kube/controllers/rollouts.js';
import { ResourceRegistry } from '../../sandbox/kube/resources.js';
import { startKubeServer, type KubeServer } from '../../sandbox/kube/server.js';
import { ObjectStore } from '../../sandbox/kube/store.js';
import { dropPrefix, INGEST_TOKEN, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { RecordingSink } from '../helpers/recording-sink.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LABELS = { 'app.kubernetes.io/part-of': 'checkout', env: 'prod', 'hangar.io/release-tracked': 'true' };

function configFor(kubeconfigPath: string, facts: 'watch' | 'both'): ConfigFile {
  return parseConfigFile(`
settings: { watchLeaseSeconds: 2, watchResyncMinutes: 10 }
clusters:
  - { name: prod, kubeconfigPath: ${kubeconfigPath}, kubeconfigContext: prod, facts: ${facts} }
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod" } }
`);
}

interface World {
  clock: FakeClock;
  store: ObjectStore;
  server: KubeServer;
  rollouts: RolloutsController;
  kubeconfigPath: string;
  engines: NotificationsEngine[];
  apps: Glidepath[];
  prefix?: string;
}

let world: World | undefined;

async function startWorld(): Promise<World> {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const store = new ObjectStore(new ResourceRegistry(), { clock });
  store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest('shop'));
  store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest('argocd'));
  const server = await startKubeServer({ store, users: USERS, bookmarkIntervalMs: 500 });
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'glidepath-watch-')), 'kubeconfig');
  server.writeKubeconfig(kubeconfigPath, 'prod', 'glidepath');
  const rollouts = new RolloutsController({ store, clock, podReadyMs: 1_000 }).start();
  world = { clock, store, server, rollouts, kubeconfigPath, engines: [], apps: [] };
  return world;
}

afterEach(async () => {
  if (!world) return;
  for (const e of world.engines) e.stop();
  world.rollouts.stop();
  for (const app of world.apps) await app.close();
  await world.server.close();
  if (world.prefix) await dropPrefix(world.prefix);
  rmSync(dirname(world.kubeconfigPath), { recursive: true, force: true });
  world = undefined;
});

const rolloutType = (w: World) => w.store.registry.byKind('Rollout');

function deploy(w: World, version: string, releaseId: string): void {
  const rt = rolloutType(w);
  if (!w.store.tryGet(rt, 'shop', 'checkout')) {
    w.store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: `registry.example.com/shop/checkout:${version}`, replicas: 2, steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }], labels: LABELS, annotations: { 'hangar.io/release-id': releaseId } }));
    return;
  }
  w.store.mutate(rt, 'shop', 'checkout', (o) => {
    o.spec.template.spec.containers[0].image = `registry.example.com/shop/checkout:${version}`;
    o.metadata.annotations = { ...o.metadata.annotations, 'hangar.io/release-id': releaseId };
  });
}

function resume(w: World): void {
  w.store.patch(rolloutType(w), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' } as never);
}

async function runFor(w: World, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 500) await w.clock.advance(500);
  await Promise.all(w.engines.map((e) => e.idle()));
}

async function startGlidepath(w: World, facts: 'watch' | 'both', prefix?: string): Promise<{ app: Glidepath; sink: RecordingSink }> {
  const env = testEnv(prefix ? { REDIS_PREFIX: prefix } : {});
  w.prefix = env.REDIS_PREFIX;
  const sink = new RecordingSink();
  const app = await startTestGlidepath(configFor(w.kubeconfigPath, facts), env, { threads: sink });
  w.apps.push(app);
  return { app, sink };
}

/** A first release (healthy), then rel-2 through its paused step to healthy. */
async function releaseThrough(w: World, app: Glidepath, sink: RecordingSink): Promise<void> {
  deploy(w, '1.0.0', 'rel-1');
  await runFor(w, 5_000);
  await waitFor(async () => (await app.store.get('checkout', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
  deploy(w, '2.0.0', 'rel-2');
  await runFor(w, 5_000);
  await waitFor(async () => sink.replies.find((r) => r.releaseId === 'rel-2' && r.kind === 'paused'), 'rel-2 paused reply');
  resume(w);
  await runFor(w, 10_000);
  await waitFor(async () => sink.replies.find((r) => r.releaseId === 'rel-2' && r.kind === 'release-complete'), 'rel-2 complete');
}

describe('watch source', () => {
  it('follows a release to its final thread with no notification at all', async () => {
    const w = await startWorld();
    const { app, sink } = await startGlidepath(w, 'watch');
    await waitFor(async () => app.watchSource?.held().includes('prod') || undefined, 'lease held');
    await releaseThrough(w, app, sink);
    const rel2 = sink.replies.filter((r) => r.releaseId === 'rel-2').map((r) => r.kind);
    // The test resumes the pause as kubectl would, not through Glidepath: the thread says so.
    expect(rel2).toEqual(['paused', 'resumed', 'stage-healthy', 'release-complete']);
    const record = (await app.store.get('checkout', 'rel-2'))!;
    expect(record.status).toBe('Complete');
    expect(record.images).toEqual(['registry.example.com/shop/checkout:2.0.0']);
  }, 60_000);

  it('with the webhooks on too, each observation is reduced once and no reply is doubled', async () => {
    const w = await startWorld();
    const { app, sink } = await startGlidepath(w, 'both');
    w.engines.push(new NotificationsEngine({ kind: 'rollout', store: w.store, clock: w.clock, rollouts: w.rollouts, webhook: { url: `${app.url}/v1/facts/rollouts`, token: INGEST_TOKEN } }).start());
    await waitFor(async () => app.watchSource?.held().includes('prod') || undefined, 'lease held');
    await releaseThrough(w, app, sink);
    const kinds = sink.replies.map((r) => `${r.releaseId} ${r.kind}`);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds.filter((k) => k.startsWith('rel-2'))).toEqual(['rel-2 paused', 'rel-2 resumed', 'rel-2 stage-healthy', 'rel-2 release-complete']);
    // Every version of the Rollout that both sources saw is one identity, reduced once: the second sighting is a repeat.
    await waitFor(async () => Object.values(await app.facts.queue.getJobCounts('waiting', 'active', 'delayed')).every((n) => n === 0) || undefined, 'drained');
    const jobs = await app.facts.queue.getJobs(['completed']);
    const queued = jobs.flatMap((job) => factsOfJob(job));
    const byVersion = new Map<string, Set<string>>();
    for (const { id, fact } of queued) {
      if (fact.kind !== 'rollout' || fact.event === 'on-glidepath-heartbeat' || fact.event === 'watch-resync') continue;
      const key = fact.rollout.resourceVersion;
      byVersion.set(key, (byVersion.get(key) ?? new Set()).add(id));
    }
    const sources = new Set(queued.map((q) => q.fact.source));
    expect(sources.has('watch') && sources.has('rollouts-webhook')).toBe(true);
    // What each job was told when it took its facts: every identity but the first sighting is a repeat.
    const repeated = jobs.reduce((sum, job) => sum + (job.returnvalue as { repeats: number }).repeats, 0);
    expect(repeated).toBe(queued.length - new Set(queued.map((q) => q.id)).size);
    expect(repeated).toBeGreaterThan(0);
    const counted = (await app.metrics.registry.getSingleMetric('glidepath_facts_repeated_total')?.get())?.values.reduce((sum, v) => sum + v.value, 0);
    expect(counted).toBeGreaterThanOrEqual(repeated);
    for (const [version, ids] of byVersion) expect([version, ids.size]).toEqual([version, 1]);
  }, 60_000);

  it('resumes after the API server restarts with its history compacted (410): relists and misses nothing', async () => {
    const w = await startWorld();
    const { app, sink } = await startGlidepath(w, 'watch');
    await waitFor(async () => app.watchSource?.held().includes('prod') || undefined, 'lease held');
    deploy(w, '1.0.0', 'rel-1');
    await runFor(w, 5_000);
    await waitFor(async () => (await app.store.get('checkout', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    const port = Number(new URL(w.server.url).port);
    await w.server.close();
    // While the API server is down, the next release starts and pauses; etcd compacts.
    deploy(w, '2.0.0', 'rel-2');
    await runFor(w, 5_000);
    w.store.compact();
    w.server = await startKubeServer({ store: w.store, users: USERS, port, bookmarkIntervalMs: 500 });
    await waitFor(async () => sink.replies.find((r) => r.releaseId === 'rel-2' && r.kind === 'paused'), 'rel-2 paused after the restart');
    const metrics = await app.metrics.registry.getSingleMetricAsString('glidepath_watch_restarts_total');
    expect(metrics).toMatch(/relist="true"\} [1-9]/);
  }, 60_000);

  it('one replica watches a cluster; when it dies another takes the lease over and goes on', async () => {
    const w = await startWorld();
    const first = await startGlidepath(w, 'watch');
    const second = await startGlidepath(w, 'watch', w.prefix);
    await waitFor(async () => (first.app.watchSource!.held().length + second.app.watchSource!.held().length === 1) || undefined, 'one holder');
    const [holder, other] = first.app.watchSource!.held().includes('prod') ? [first, second] : [second, first];
    expect(other.app.watchSource!.held()).toEqual([]);
    deploy(w, '1.0.0', 'rel-1');
    await runFor(w, 5_000);
    await waitFor(async () => (await other.app.store.get('checkout', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    // The holder dies without handing over: its lease runs out (2 s), then the other takes it.
    await holder.app.watchSource!.close({ release: false });
    await waitFor(async () => other.app.watchSource!.held().includes('prod') || undefined, 'takeover', 10_000);
    deploy(w, '2.0.0', 'rel-2');
    await runFor(w, 5_000);
    await waitFor(async () => [...first.sink.replies, ...second.sink.replies].find((r) => r.releaseId === 'rel-2' && r.kind === 'paused'), 'rel-2 seen after takeover');
  }, 60_000);
});
