import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { applicationFactBody, rolloutFactBody } from '../../sandbox/kube/controllers/fact-bodies.js';
import { ARGOCD_CONFIG_FILE, loadNotificationConfig, ROLLOUTS_CONFIG_FILE, templateSkeleton } from '../../sandbox/kube/controllers/notification-config.js';
import { NotificationsEngine, type NotificationsEngineOptions } from '../../sandbox/kube/controllers/notifications.js';
import type { RolloutsController } from '../../sandbox/kube/controllers/rollouts.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';
import { Receiver } from './receiver.js';
import { startTestCluster, type TestCluster } from './support.js';

let clock: FakeClock;
let cluster: TestCluster;
let store: ObjectStore;
let rollouts: RolloutsController;
let engine: NotificationsEngine;
let receiver: Receiver;

const TRACKED = { 'hangar.io/release-tracked': 'true', 'app.kubernetes.io/part-of': 'checkout', env: 'prod' };

async function setUp(options: Partial<NotificationsEngineOptions> = {}): Promise<void> {
  receiver = new Receiver();
  const url = await receiver.start();
  engine = new NotificationsEngine({ kind: 'rollout', store, clock, rollouts, webhook: { url, token: 'cluster-prod-token' }, ...options }).start();
}

const rolloutType = () => store.registry.byKind('Rollout');

function createRollout(name = 'checkout', labels: Record<string, string> = TRACKED): void {
  store.create(
    rolloutType(),
    'shop',
    rolloutManifest({
      namespace: 'shop',
      name,
      image: 'registry.example.com/shop/checkout:1.28.0',
      steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }],
      labels,
      annotations: { 'hangar.io/release-id': 'rel-3', 'kubectl.kubernetes.io/last-applied-configuration': '{"huge":"manifest"}' },
    }),
  );
}

function release(image: string, id: string): void {
  store.mutate(rolloutType(), 'shop', 'checkout', (o) => {
    o.spec.template.spec.containers[0].image = image;
    o.metadata.annotations = { ...o.metadata.annotations, 'hangar.io/release-id': id };
  });
}

/** Facts other than heartbeats (the heartbeat trigger also fires at the first sight of each 10-minute bucket). */
function facts(): string[] {
  return receiver.events().filter((e) => e !== 'on-glidepath-heartbeat');
}

async function flush(ms = 0): Promise<void> {
  await clock.advance(ms);
  await engine.idle();
}

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  cluster = await startTestCluster({ clock, namespaces: ['shop', 'argocd'], controllers: { rollouts: { podReadyMs: 10_000 } } });
  store = cluster.store;
  rollouts = cluster.rollouts!;
});
afterEach(async () => {
  (engine as NotificationsEngine | undefined)?.stop();
  await cluster.stop();
  await (receiver as Receiver | undefined)?.close();
  engine = undefined as unknown as NotificationsEngine;
  receiver = undefined as unknown as Receiver;
});

/** Object keys, recursively, of the parts a template spells out (a `{{toJson …}}` value is a leaf). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length > 0 ? [shape(value[0])] : [];
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shape((value as Record<string, unknown>)[k])]));
  return 'leaf';
}
function prune(sim: unknown, tpl: unknown): unknown {
  if (tpl === 'leaf') return 'leaf';
  if (Array.isArray(tpl)) return Array.isArray(sim) ? [prune(sim[0], tpl[0])] : sim;
  if (tpl && typeof tpl === 'object' && sim && typeof sim === 'object') {
    return Object.fromEntries(Object.keys(sim).sort().map((k) => [k, prune((sim as Record<string, unknown>)[k], (tpl as Record<string, unknown>)[k])]));
  }
  return sim;
}

describe('notifications engine simulator', () => {
  it('sends bodies with exactly the keys of every Glidepath template in deploy/notifications/', () => {
    const rollout = rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'img:1', labels: TRACKED });
    rollout.metadata.uid = 'u';
    rollout.status = { phase: 'Healthy' };
    for (const [name, body] of Object.entries(loadNotificationConfig(ROLLOUTS_CONFIG_FILE).templates)) {
      const tpl = shape(templateSkeleton(body));
      const event = (templateSkeleton(body) as { event: string }).event;
      expect(prune(shape(rolloutFactBody(event, 0, rollout)), tpl), name).toEqual(tpl);
    }
    const app: KubeObject = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'a', namespace: 'argocd' }, spec: { project: 'p', destination: {} } };
    for (const [name, body] of Object.entries(loadNotificationConfig(ARGOCD_CONFIG_FILE).templates)) {
      const tpl = shape(templateSkeleton(body));
      const event = (templateSkeleton(body) as { event: string }).event;
      expect(prune(shape(applicationFactBody(event, 0, app)), tpl), name).toEqual(tpl);
    }
  });

  it('follows a canary with fresh facts only, to subscribed Rollouts, with the Bearer token', async () => {
    await setUp();
    createRollout();
    createRollout('untracked', { env: 'prod' });
    await flush();
    expect(facts()).toEqual(['on-glidepath-rollout-healthy']);
    receiver.received.splice(0, receiver.received.length, ...receiver.received.filter((r) => r.body.event !== 'on-glidepath-heartbeat'));
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await flush(10_000);
    expect(facts()).toEqual(['on-glidepath-rollout-healthy', 'on-glidepath-rollout-updated', 'on-glidepath-rollout-step', 'on-glidepath-rollout-step', 'on-glidepath-rollout-paused']);
    const first = receiver.received[1]!;
    expect(first.authorization).toBe('Bearer cluster-prod-token');
    expect(first.contentType).toBe('application/json');
    expect(first.body.rollout.metadata.annotations).toEqual({ 'hangar.io/release-id': 'rel-4', 'rollout.argoproj.io/revision': '2' });
    expect(first.body.rollout.spec.template.spec.containers).toEqual([{ name: 'checkout', image: 'registry.example.com/shop/checkout:1.29.0' }]);
    expect(first.body.sentAt).toBe(Date.parse('2026-08-20T09:00:00Z') / 1000);
    for (const r of receiver.received) expect(r.body.rollout.status.observedGeneration).toBe(String(r.body.rollout.metadata.generation));
    const paused = receiver.received.at(-1)!.body.rollout.status;
    expect(paused).toMatchObject({ phase: 'Paused', currentStepIndex: 1, pauseConditions: [{ reason: 'CanaryPauseStep' }] });
    store.patch(rolloutType(), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' });
    await flush(10_000);
    await flush(10_000);
    expect(facts().slice(5)).toEqual(['on-glidepath-rollout-step', 'on-glidepath-rollout-step', 'on-glidepath-rollout-healthy']);
  });

  it('stale-facts fault: the event path sends the pre-reconcile object (generation not yet observed, old pod hash)', async () => {
    await setUp({ faults: { staleFacts: true } });
    createRollout();
    await flush();
    receiver.received.length = 0;
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await flush();
    const updated = receiver.received.filter((r) => r.body.event === 'on-glidepath-rollout-updated');
    expect(updated).toHaveLength(2);
    const stale = updated.find((r) => r.body.rollout.status.observedGeneration !== String(r.body.rollout.metadata.generation))!;
    expect(stale.body.rollout.metadata.generation).toBe(2);
    expect(stale.body.rollout.status.observedGeneration).toBe('1');
    expect(stale.body.rollout.status.phase).toBe('Healthy');
    expect(stale.body.rollout.status.currentPodHash).toBe(stale.body.rollout.status.stableRS);
  });

  it('receiver-down fault: the fact is lost silently and never redelivered', async () => {
    await setUp({ resyncEveryMs: 60_000 });
    createRollout();
    await flush();
    const before = receiver.received.length;
    engine.faults.receiverDown = true;
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await flush(10_000);
    expect(receiver.received.length).toBe(before);
    expect(engine.deliveries.filter((d) => d.outcome === 'lost').map((d) => d.event)).toContain('on-glidepath-rollout-paused');
    engine.faults.receiverDown = false;
    await flush(5 * 60_000);
    expect(receiver.events().filter((e) => e !== 'on-glidepath-heartbeat')).toEqual(['on-glidepath-rollout-healthy']);
  });

  it('a receiver answering 5xx is retried three times; the next resync sends it again (notified-state reset)', async () => {
    await setUp({ resyncEveryMs: 60_000 });
    createRollout();
    await flush();
    receiver.received.length = 0;
    receiver.status = 503;
    store.mutate(rolloutType(), 'shop', 'checkout', (o) => void (o.spec.paused = true));
    await flush(3000);
    expect(receiver.events()).toEqual(['on-glidepath-rollout-paused', 'on-glidepath-rollout-paused', 'on-glidepath-rollout-paused', 'on-glidepath-rollout-paused']);
    expect(engine.deliveries.at(-1)).toMatchObject({ outcome: 'failed', status: 503 });
    receiver.status = 200;
    await flush(60_000);
    expect(receiver.events().filter((e) => e === 'on-glidepath-rollout-paused')).toHaveLength(5);
  });

  it('duplicate-deliveries fault: every fact arrives twice', async () => {
    await setUp({ faults: { duplicateDeliveries: 1 } });
    createRollout();
    await flush();
    expect(facts()).toEqual(['on-glidepath-rollout-healthy', 'on-glidepath-rollout-healthy']);
    expect(receiver.events().filter((e) => e === 'on-glidepath-heartbeat')).toHaveLength(2);
  });

  it('heartbeats ride on the resync, once per 10-minute bucket', async () => {
    await setUp({ resyncEveryMs: 10 * 60_000 });
    createRollout();
    await flush();
    await flush(30 * 60_000);
    expect(receiver.events().filter((e) => e === 'on-glidepath-heartbeat')).toHaveLength(4);
    expect(receiver.received.at(-1)!.body.rollout.status.phase).toBe('Healthy');
  });

  it('Argo CD: a failed operation is notified once per finishedAt; the app must be subscribed', async () => {
    await setUp({ kind: 'application', rollouts: undefined });
    const appRt = store.registry.byKind('Application');
    for (const [name, labels] of [['shop-checkout', TRACKED], ['other', {}]] as const) {
      store.create(appRt, 'argocd', {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name, labels },
        spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' }, source: { repoURL: 'https://git.example.com/shop.git', targetRevision: 'main', path: 'checkout' } },
      });
    }
    const fail = (name: string, message: string): void =>
      void store.mutate(appRt, 'argocd', name, (o) => {
        o.status = {
          sync: { status: 'OutOfSync', revision: 'abc123' },
          health: { status: 'Healthy' },
          operationState: { operation: { sync: { revision: 'abc123' } }, phase: 'Failed', message, startedAt: '2026-08-20T09:00:00Z', finishedAt: '2026-08-20T09:00:05Z', syncResult: { revision: 'abc123' } },
        };
      });
    fail('shop-checkout', 'one or more objects failed to apply');
    fail('shop-checkout', 'one or more objects failed to apply (reason: admission webhook denied)');
    fail('other', 'nope');
    await flush();
    expect(receiver.events()).toEqual(['on-glidepath-sync-failed']);
    const body = receiver.received[0]!.body;
    expect(body.application.metadata.name).toBe('shop-checkout');
    expect(body.application.spec).toEqual({ project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } });
  });

  it('Argo CD: an operation Running for 10 minutes (a hook-pinned sync) is reported at the next resync', async () => {
    await setUp({ kind: 'application', rollouts: undefined, resyncEveryMs: 5 * 60_000 });
    const appRt = store.registry.byKind('Application');
    store.create(appRt, 'argocd', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop-checkout', labels: TRACKED },
      spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
    });
    store.mutate(appRt, 'argocd', 'shop-checkout', (o) => {
      o.status = {
        health: { status: 'Suspended' },
        operationState: { operation: { sync: {} }, phase: 'Running', message: 'waiting for completion of hook batch/Job/shop-checkout-postsync', startedAt: '2026-08-20T09:00:00Z' },
      };
    });
    await flush(9 * 60_000);
    expect(receiver.events()).toEqual([]);
    await flush(60_000);
    expect(receiver.events()).toEqual(['on-glidepath-sync-running-long']);
    await flush(30 * 60_000);
    expect(receiver.events()).toEqual(['on-glidepath-sync-running-long']);
  });

  it('delivers in parallel across Rollouts but in order for each one', async () => {
    await setUp({ concurrency: 4 });
    for (const name of ['a', 'b', 'c']) createRollout(name);
    await flush();
    for (const name of ['a', 'b', 'c']) {
      store.mutate(rolloutType(), 'shop', name, (o) => void (o.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
    }
    await flush(10_000);
    for (const name of ['a', 'b', 'c']) {
      const mine = receiver.received.filter((r) => r.body.rollout.metadata.name === name && r.body.event !== 'on-glidepath-heartbeat').map((r) => r.body.event);
      expect(mine).toEqual(['on-glidepath-rollout-healthy', 'on-glidepath-rollout-updated', 'on-glidepath-rollout-step', 'on-glidepath-rollout-step', 'on-glidepath-rollout-paused']);
    }
  });
});
