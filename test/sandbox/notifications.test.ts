import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../src/sandbox/kube/builders.js';
import { FakeClock } from '../../src/sandbox/kube/clock.js';
import { NotificationsEngine, type NotificationsEngineOptions } from '../../src/sandbox/kube/controllers/notifications.js';
import { RolloutsController } from '../../src/sandbox/kube/controllers/rollouts.js';
import { ObjectStore } from '../../src/sandbox/kube/store.js';
import { ResourceRegistry } from '../../src/sandbox/kube/resources.js';
import { namespaceManifest } from '../../src/sandbox/kube/builders.js';
import { Receiver } from './receiver.js';

let clock: FakeClock;
let store: ObjectStore;
let rollouts: RolloutsController;
let engine: NotificationsEngine;
let receiver: Receiver;

async function setUp(options: Partial<NotificationsEngineOptions> = {}): Promise<void> {
  receiver = new Receiver();
  const url = await receiver.start();
  engine = new NotificationsEngine({ store, clock, rollouts, webhook: { url, token: 'cluster-prod-token' }, ...options }).start();
}

const rolloutType = () => store.registry.byKind('Rollout');

function createRollout(annotations: Record<string, string> = {}): void {
  store.create(
    rolloutType(),
    'shop',
    rolloutManifest({
      namespace: 'shop',
      name: 'checkout',
      image: 'registry.example.com/shop/checkout:1.28.0',
      labels: { 'app.kubernetes.io/part-of': 'checkout', env: 'prod' },
      annotations: { 'hangar.io/release-id': 'rel-3', 'kubectl.kubernetes.io/last-applied-configuration': '{"huge":"manifest"}', ...annotations },
    }),
  );
}

function release(image: string, id: string): void {
  store.mutate(rolloutType(), 'shop', 'checkout', (o) => {
    o.spec.template.spec.containers[0].image = image;
    o.metadata.annotations = { ...o.metadata.annotations, 'hangar.io/release-id': id };
  });
}

async function flush(): Promise<void> {
  await clock.advance(0);
  await engine.idle();
}

beforeEach(() => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  store = new ObjectStore(new ResourceRegistry(), { clock });
  store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest('shop'));
  store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest('argocd'));
  rollouts = new RolloutsController({ store, clock, podReadyMs: 10_000 }).start();
});
afterEach(async () => {
  engine.stop();
  rollouts.stop();
  await receiver.close();
});

describe('notifications engine simulator', () => {
  it('POSTs Glidepath fact bodies with the Bearer token; the event path carries the stale pre-reconcile object', async () => {
    await setUp();
    createRollout();
    await flush();
    receiver.received.length = 0;
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await clock.advance(10_000);
    await engine.idle();

    const first = receiver.received[0]!;
    expect(first.authorization).toBe('Bearer cluster-prod-token');
    expect(first.contentType).toBe('application/json');
    expect(Object.keys(first.body).sort()).toEqual(['event', 'rollout', 'sentAt']);
    expect(Object.keys(first.body.rollout).sort()).toEqual(['metadata', 'spec', 'status']);
    expect(first.body.rollout.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    expect(first.body.rollout.metadata.annotations['hangar.io/release-id']).toBe('rel-4');
    expect(first.body.rollout.spec.template.spec.containers).toEqual([{ name: 'checkout', image: 'registry.example.com/shop/checkout:1.29.0' }]);
    expect(first.body.sentAt).toBe(Date.parse('2026-08-20T09:00:00Z') / 1000);

    // rule A material: on-rollout-updated arrives before the controller observed the generation.
    const updated = receiver.received.find((r) => r.body.event === 'on-glidepath-rollout-updated')!;
    expect(updated.body.rollout.metadata.generation).toBe(2);
    expect(updated.body.rollout.status.observedGeneration).toBe('1');
    expect(updated.body.rollout.status.phase).toBe('Healthy');
    expect(updated.body.rollout.status.currentPodHash).toBe(updated.body.rollout.status.stableRS);

    // on-rollout-paused shows the state before the pause; the change trigger shows it fresh.
    const paused = receiver.received.find((r) => r.body.event === 'on-glidepath-rollout-paused')!;
    expect(paused.body.rollout.status.pauseConditions).toBeUndefined();
    expect(paused.body.rollout.status.phase).toBe('Progressing');
    const fresh = receiver.received.filter((r) => r.body.event === 'on-glidepath-rollout-changed').at(-1)!;
    expect(fresh.body.rollout.status).toMatchObject({ phase: 'Paused', observedGeneration: '2', pauseConditions: [{ reason: 'CanaryPauseStep' }] });
  });

  it('with stale payloads switched off, event-path facts carry the persisted object', async () => {
    await setUp({ faults: { stalePayloads: false } });
    createRollout();
    await flush();
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await flush();
    const updated = receiver.received.find((r) => r.body.event === 'on-glidepath-rollout-updated' && r.body.rollout.metadata.generation === 2)!;
    expect(updated.body.rollout.status.observedGeneration).toBe('2');
    expect(updated.body.rollout.status.currentPodHash).not.toBe(updated.body.rollout.status.stableRS);
  });

  it('a receiver that is down loses facts silently: nothing is redelivered when it comes back', async () => {
    await setUp();
    createRollout();
    await flush();
    const before = receiver.received.length;
    engine.faults.receiverDown = true;
    release('registry.example.com/shop/checkout:1.29.0', 'rel-4');
    await clock.advance(10_000);
    await engine.idle();
    expect(receiver.received.length).toBe(before);
    expect(engine.deliveries.filter((d) => d.outcome === 'lost').map((d) => d.event)).toContain('on-glidepath-rollout-paused');
    engine.faults.receiverDown = false;
    await clock.advance(60 * 60_000);
    await engine.idle();
    expect(receiver.received.length).toBe(before);
  });

  it('a receiver answering 5xx is retried three times, then the fact is lost', async () => {
    await setUp({ triggers: { rolloutChanged: null } });
    createRollout();
    await flush();
    receiver.received.length = 0;
    receiver.status = 503;
    store.mutate(rolloutType(), 'shop', 'checkout', (o) => void (o.spec.paused = true));
    await clock.advance(0);
    for (let i = 0; i < 5; i++) await clock.advance(1000);
    await engine.idle();
    expect(receiver.events()).toEqual(['on-glidepath-rollout-paused', 'on-glidepath-rollout-paused', 'on-glidepath-rollout-paused', 'on-glidepath-rollout-paused']);
    expect(engine.deliveries.at(-1)).toMatchObject({ outcome: 'lost', status: 503 });
  });

  it('duplicate deliveries send every fact twice', async () => {
    await setUp({ faults: { duplicateDeliveries: 1 }, triggers: { rolloutChanged: null } });
    createRollout();
    await flush();
    expect(receiver.events()).toEqual([
      'on-glidepath-rollout-updated',
      'on-glidepath-rollout-updated',
      'on-glidepath-rollout-completed',
      'on-glidepath-rollout-completed',
    ]);
  });

  it('sends heartbeats every N on the clock', async () => {
    await setUp({ heartbeatEveryMs: 5 * 60_000, triggers: { rolloutChanged: null, rolloutEvents: {} } });
    createRollout();
    await flush();
    expect(receiver.events()).toEqual([]);
    await clock.advance(15 * 60_000);
    await engine.idle();
    expect(receiver.events()).toEqual(['on-glidepath-heartbeat', 'on-glidepath-heartbeat', 'on-glidepath-heartbeat']);
    expect(receiver.received[2]!.body.rollout.status.phase).toBe('Healthy');
  });

  it('notifies once about an Application operation that failed', async () => {
    await setUp({ triggers: { rolloutChanged: null } });
    const appRt = store.registry.byKind('Application');
    store.create(appRt, 'argocd', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop-checkout' },
      spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' }, source: { repoURL: 'https://git.example.com/shop.git', targetRevision: 'main', path: 'checkout' } },
    });
    const fail = (message: string): void =>
      void store.mutate(appRt, 'argocd', 'shop-checkout', (o) => {
        o.status = {
          sync: { status: 'OutOfSync', revision: 'abc123' },
          health: { status: 'Healthy' },
          operationState: { operation: { sync: { revision: 'abc123' } }, phase: 'Failed', message, startedAt: '2026-08-20T09:00:00Z', finishedAt: '2026-08-20T09:00:05Z', syncResult: { revision: 'abc123' } },
        };
      });
    fail('one or more objects failed to apply');
    fail('one or more objects failed to apply (reason: admission webhook denied)');
    await flush();
    expect(receiver.events()).toEqual(['on-glidepath-sync-failed']);
    const body = receiver.received[0]!.body;
    expect(Object.keys(body.application).sort()).toEqual(['metadata', 'spec', 'status']);
    expect(Object.keys(body.application.status).sort()).toEqual(['health', 'operationState', 'reconciledAt', 'sync']);
    expect(body.application.spec).toEqual({ project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } });
  });
});
