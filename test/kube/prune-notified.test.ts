/**
 * The prune job against the simulated cluster: the notifications engine's notified annotation
 * grows under heartbeats, the job (as its own service account, with only the prune ClusterRole)
 * removes it from tracked Rollouts alone, the engine resends current state at once, and a value
 * that changed between read and write is skipped, not overwritten.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { applyPrune, NOTIFIED_ANNOTATION, planPrune, pruneScopes, pruneSummary } from '../../src/kube/prune-notified.js';
import { declaredTriples } from '../../src/kube/verbs.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { NotificationsEngine } from '../../sandbox/kube/controllers/notifications.js';
import { startStandInCluster, type StandInCluster } from '../../sandbox/kube/stand-in.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';
import { Receiver } from '../sandbox/receiver.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
const PRUNE_RULES = (parse(readFileSync(new URL('../../deploy/prune-notified/rbac/clusterrole.yaml', import.meta.url), 'utf8')) as { rules: Rule[] }).rules;
const ENGINE_TRACKED = { 'hangar.io/release-tracked': 'true', env: 'prod' };

let clock: FakeClock;
let cluster: StandInCluster;
let store: ObjectStore;
let engine: NotificationsEngine;
let receiver: Receiver;
let clusters: ClusterClients;
let dir: string;

const config = parseConfigFile(`
clusters: [{ name: prod, kubeconfigContext: prod }]
pipelines:
  - name: checkout
    channel: C0CHECKOUT
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout" } }
      - { name: prod-again, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod" } }
`);

const rolloutType = () => store.registry.byKind('Rollout');
const notified = (name: string): Record<string, number> | undefined => {
  const raw = store.get(rolloutType(), 'shop', name).metadata.annotations?.[NOTIFIED_ANNOTATION];
  return raw === undefined ? undefined : (JSON.parse(raw) as Record<string, number>);
};

function createRollout(name: string, partOf: string): void {
  store.create(
    rolloutType(),
    'shop',
    rolloutManifest({ namespace: 'shop', name, image: `registry.example.com/shop/${name}:1.0.0`, steps: [{ setWeight: 50 }], labels: { ...ENGINE_TRACKED, 'app.kubernetes.io/part-of': partOf } }),
  );
}

async function flush(ms = 0): Promise<void> {
  await clock.advance(ms);
  await engine.idle();
}

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  receiver = new Receiver();
  // The job runs as its own user, with only the rules its ClusterRole ships.
  cluster = await startStandInCluster({
    name: 'prod',
    clock,
    namespaces: ['shop'],
    users: [{ name: 'prune-notified', token: 'prune-token', rules: PRUNE_RULES }],
    controllers: { rollouts: { podReadyMs: 10_000 }, notifications: { rollouts: { webhook: { url: await receiver.start(), token: 'cluster-prod-token' }, resyncEveryMs: 10 * 60_000 } } },
  });
  store = cluster.store;
  engine = cluster.notifications[0]!;
  dir = dirname(cluster.kubeconfigPath!);
  clusters = new ClusterClients([{ name: 'prod', kubeconfigPath: cluster.kubeconfigPath!, kubeconfigContext: 'prod' }], { requestTimeoutMs: 5_000 });
  createRollout('checkout', 'checkout');
  createRollout('ledger', 'ledger'); // subscribed by the engine, tracked by no pipeline
  await flush(60_000);
});

afterEach(async () => {
  await cluster.stop(); // its kubeconfig folder (and the CLI test's config in it) goes with it
  await receiver.close();
});

describe('prune-notified', () => {
  it('the annotation grows by one key per heartbeat bucket and never shrinks on its own', async () => {
    const start = Object.keys(notified('checkout') ?? {}).length;
    await flush(60 * 60_000);
    const afterHour = notified('checkout')!;
    await flush(5 * 60 * 60_000);
    const afterSixHours = notified('checkout')!;
    expect(Object.keys(afterHour).length - start).toBe(6);
    expect(Object.keys(afterSixHours).length - start).toBe(36);
    for (const key of Object.keys(afterHour)) expect(afterSixHours).toHaveProperty([key]);
    expect(Object.keys(afterSixHours).filter((k) => k.includes(':on-glidepath-heartbeat:[0].') && k.endsWith(':glidepath:')).length).toBeGreaterThanOrEqual(36);
  });

  it('removes it from every tracked Rollout (once, though two stages select it), resends current state, and leaves the rest', async () => {
    await flush(3 * 60 * 60_000);
    const value = store.get(rolloutType(), 'shop', 'checkout').metadata.annotations![NOTIFIED_ANNOTATION]!;
    const ledgerBefore = notified('ledger');

    const dry = await applyPrune(clusters, await planPrune(clusters, pruneScopes(config)), { dryRun: true });
    expect(dry).toMatchObject({ scanned: 1, pruned: 1, skipped: 0, failed: 0, dryRun: true });
    expect(notified('checkout')).toBeDefined();
    expect(pruneSummary(dry)).toBe(`prune-notified: scanned 1 Rollouts, would prune 1, skipped 0 (changed since read), failed 0, would free ${dry.bytesFreed} bytes`);

    const sentBefore = receiver.received.length;
    const result = await applyPrune(clusters, await planPrune(clusters, pruneScopes(config)));
    expect(result).toMatchObject({ scanned: 1, pruned: 1, skipped: 0, failed: 0, dryRun: false });
    expect(result.bytesFreed).toBe(NOTIFIED_ANNOTATION.length + value.length);
    expect(notified('ledger')).toEqual(ledgerBefore);

    // The engine saw its state gone and sent the current state again, at once.
    await flush();
    const resent = receiver.received.slice(sentBefore).filter((r) => r.body.rollout.metadata.name === 'checkout');
    expect(resent.map((r) => r.body.event).sort()).toEqual(['on-glidepath-heartbeat', 'on-glidepath-rollout-healthy']);
    expect(resent.every((r) => r.body.rollout.status.phase === 'Healthy')).toBe(true);
    expect(Object.keys(notified('checkout')!)).toHaveLength(2);
  });

  it('skips (and counts) a Rollout whose annotation changed between read and write, keeping the newer value', async () => {
    const plan = await planPrune(clusters, pruneScopes(config));
    await flush(10 * 60_000); // the next heartbeat bucket: the engine adds a key
    const newer = notified('checkout');
    const result = await applyPrune(clusters, plan);
    expect(result).toMatchObject({ scanned: 1, pruned: 0, skipped: 1, failed: 0, bytesFreed: 0 });
    expect(notified('checkout')).toEqual(newer);
  });

  it('runs as `main.js prune-notified`: one summary line, --dry-run changes nothing, a wrong argument shows the usage', async () => {
    const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `clusters: [{ name: prod, kubeconfigContext: prod, kubeconfigPath: ${join(dir, 'kubeconfig')} }]\npipelines: [{ name: checkout, channel: C0CHECKOUT, stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout" } }] }]\n`);
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', main, 'prune-notified', ...args], { env: { ...process.env, GLIDEPATH_CONFIG: file, NODE_TLS_REJECT_UNAUTHORIZED: '1' } }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    const dry = (await run('--dry-run')) as { stdout: string };
    expect(dry.stdout).toMatch(/^prune-notified: scanned 1 Rollouts, would prune 1, skipped 0 \(changed since read\), failed 0, would free \d+ bytes\n$/);
    expect(notified('checkout')).toBeDefined();
    const real = (await run()) as { stdout: string };
    expect(real.stdout).toMatch(/^prune-notified: scanned 1 Rollouts, pruned 1, skipped 0 \(changed since read\), failed 0, freed \d+ bytes\n$/);
    const wrong = (await run('--now')) as { code: number; stderr: string };
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('unknown argument "--now"; usage: glidepath prune-notified [--dry-run]');
  }, 60_000);

  it('the prune ClusterRole grants get, list and patch on rollouts and nothing else', () => {
    const granted = PRUNE_RULES.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g} ${res} ${v}`)))).sort();
    expect(granted).toEqual(declaredTriples('prune-notified'));
    expect(granted).toEqual(['argoproj.io rollouts get', 'argoproj.io rollouts list', 'argoproj.io rollouts patch']);
  });
});
