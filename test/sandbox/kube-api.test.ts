import { PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { rawRequest, rejection, startTestCluster, statusOf, type TestCluster } from './support.js';

const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

let cluster: TestCluster;

beforeEach(async () => {
  cluster = await startTestCluster({ namespaces: ['shop', 'payments'] });
});
afterEach(async () => {
  await cluster.stop();
});

async function createRollout(name: string, labels: Record<string, string> = {}, namespace = 'shop'): Promise<KubeObject> {
  const api = cluster.customObjects();
  return (await api.createNamespacedCustomObject({
    ...ROLLOUTS,
    namespace,
    body: rolloutManifest({ namespace, name, image: `registry.example.com/${name}:1.0.0`, labels }),
  })) as KubeObject;
}

describe('stand-in API server with client-node', () => {
  it('serves discovery and a kubeconfig that client-node loads', async () => {
    const kc = cluster.kubeConfig();
    expect(kc.getCurrentCluster()?.server).toBe(cluster.server.url);
    const res = await rawRequest(cluster.server, '/apis/argoproj.io/v1alpha1', 'admin-token');
    const doc = JSON.parse(res.body) as { resources: { name: string; namespaced: boolean }[] };
    const names = doc.resources.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['rollouts', 'rollouts/status', 'rollouts/scale', 'applications', 'applicationsets', 'applicationsets/status', 'analysisruns']));
    // The Application CRD has no status subresource, so neither does the stand-in.
    expect(names).not.toContain('applications/status');
    const kargo = JSON.parse((await rawRequest(cluster.server, '/apis/kargo.akuity.io/v1alpha1', 'admin-token')).body) as { resources: { name: string }[] };
    expect(kargo.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['stages', 'stages/status', 'promotions', 'freights', 'warehouses']));
  });

  it('refuses requests without a known bearer token', async () => {
    const res = await rawRequest(cluster.server, '/apis/argoproj.io/v1alpha1/rollouts', 'nope');
    expect(res.status).toBe(401);
    expect((JSON.parse(res.body) as { reason: string }).reason).toBe('Unauthorized');
  });

  it('creates with generateName, sets uid, generation 1 and a global resourceVersion', async () => {
    const api = cluster.customObjects();
    const body = rolloutManifest({ namespace: 'shop', name: '', image: 'img:1' });
    body.metadata = { name: '', generateName: 'checkout-' };
    const created = (await api.createNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', body })) as KubeObject;
    expect(created.metadata.name).toMatch(/^checkout-[a-z0-9]{5}$/);
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    const second = await createRollout('cart');
    expect(Number(second.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    const err = statusOf(await rejection(createRollout('cart')));
    expect(err).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'rollouts.argoproj.io "cart" already exists' });
  });

  it('lists with label selectors, field selectors and limit/continue pagination', async () => {
    await createRollout('checkout', { env: 'prod', tier: 'web' });
    await createRollout('cart', { env: 'staging', tier: 'web' });
    await createRollout('search', { env: 'dev' });
    await createRollout('ledger', { env: 'prod' }, 'payments');
    const api = cluster.customObjects();
    const names = async (labelSelector?: string, fieldSelector?: string, namespace = 'shop'): Promise<string[]> => {
      const list = (await api.listNamespacedCustomObject({ ...ROLLOUTS, namespace, labelSelector, fieldSelector })) as { items: KubeObject[] };
      return list.items.map((i) => i.metadata.name);
    };
    expect(await names('env=prod')).toEqual(['checkout']);
    expect(await names('env!=prod')).toEqual(['cart', 'search']);
    expect(await names('env in (prod,staging)')).toEqual(['cart', 'checkout']);
    expect(await names('env notin (prod,staging)')).toEqual(['search']);
    expect(await names('tier')).toEqual(['cart', 'checkout']);
    expect(await names('!tier')).toEqual(['search']);
    expect(await names(undefined, 'metadata.name=cart')).toEqual(['cart']);
    const all = (await api.listClusterCustomObject({ ...ROLLOUTS, fieldSelector: 'metadata.namespace=payments' })) as { items: KubeObject[] };
    expect(all.items.map((i) => i.metadata.name)).toEqual(['ledger']);
    const events = cluster.store.registry.byKind('Event');
    cluster.store.create(events, 'shop', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Rollout', name: 'cart' }, reason: 'RolloutPaused' });
    cluster.store.create(events, 'shop', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e2' }, involvedObject: { kind: 'Rollout', name: 'checkout' }, reason: 'RolloutPaused' });
    const ev = JSON.parse((await rawRequest(cluster.server, '/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dcheckout', 'admin-token')).body) as { items: KubeObject[] };
    expect(ev.items.map((e) => e.metadata.name)).toEqual(['e2']);
    const bad = statusOf(await rejection(api.listClusterCustomObject({ ...ROLLOUTS, fieldSelector: 'spec.replicas=3' })));
    expect(bad).toMatchObject({ code: 400, message: 'field label not supported: spec.replicas' });

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = (await api.listClusterCustomObject({ ...ROLLOUTS, limit: 3, _continue: token })) as { items: KubeObject[]; metadata: { continue?: string } };
      seen.push(...page.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`));
      token = page.metadata.continue;
      pages++;
    } while (token);
    expect(pages).toBe(2);
    expect(seen).toEqual(['payments/ledger', 'shop/cart', 'shop/checkout', 'shop/search']);
  });

  it('merge and JSON patches; generation moves on spec changes only', async () => {
    const created = await createRollout('checkout');
    const api = cluster.customObjects();
    const labelled = (await api.patchNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { metadata: { labels: { env: 'prod' } } } }, merge)) as KubeObject;
    expect(labelled.metadata.labels?.env).toBe('prod');
    expect(labelled.metadata.generation).toBe(created.metadata.generation);
    const scaled = (await api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: [{ op: 'replace', path: '/spec/replicas', value: 7 }] },
      jsonPatch,
    )) as KubeObject;
    expect(scaled.spec.replicas).toBe(7);
    expect(scaled.metadata.generation).toBe(2);
    const failedTest = statusOf(await rejection(api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: [{ op: 'test', path: '/spec/replicas', value: 3 }, { op: 'replace', path: '/spec/replicas', value: 1 }] },
      jsonPatch,
    )));
    expect(failedTest.code).toBe(422);
  });

  it('isolates the status subresource: a main patch ignores status and a status patch ignores spec', async () => {
    await createRollout('checkout');
    const api = cluster.customObjects();
    const before = (await api.getNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout' })) as KubeObject;
    const main = (await api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { paused: true }, status: { abort: true } } },
      merge,
    )) as KubeObject;
    expect(main.spec.paused).toBe(true);
    expect(main.status?.abort).toBeUndefined();
    const status = (await api.patchNamespacedCustomObjectStatus(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { paused: false }, status: { abort: true } } },
      merge,
    )) as KubeObject;
    expect(status.status.abort).toBe(true);
    expect(status.spec.paused).toBe(true);
    expect(status.metadata.generation).toBe(Number(before.metadata.generation) + 1);
  });

  it('answers 409 Conflict to a write carrying a stale resourceVersion', async () => {
    const created = await createRollout('checkout');
    const api = cluster.customObjects();
    await api.patchNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { replicas: 2 } } }, merge);
    const err = statusOf(await rejection(api.patchNamespacedCustomObjectStatus(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { metadata: { resourceVersion: created.metadata.resourceVersion }, status: { pauseConditions: null } } },
      merge,
    )));
    expect(err).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(err.message).toContain('the object has been modified');
    const current = (await api.getNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout' })) as KubeObject;
    const replaced = (await api.replaceNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { ...current, spec: { ...current.spec, replicas: 4 } } })) as KubeObject;
    expect(replaced.spec.replicas).toBe(4);
    const stalePut = statusOf(await rejection(api.replaceNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: current })));
    expect(stalePut.code).toBe(409);
    // A JSON patch can guard itself with a `test` of the resourceVersion.
    const rv = replaced.metadata.resourceVersion;
    const guarded = (await api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'replace', path: '/spec/replicas', value: 6 }] },
      jsonPatch,
    )) as KubeObject;
    expect(guarded.spec.replicas).toBe(6);
    const staleTest = statusOf(await rejection(api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'replace', path: '/spec/replicas', value: 7 }] },
      jsonPatch,
    )));
    expect(staleTest.code).toBe(422);
  });

  it('rejects a schema violation with 422 Invalid naming the field path', async () => {
    await createRollout('checkout');
    const api = cluster.customObjects();
    const err = statusOf(await rejection(api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { replicas: 'five' } } },
      merge,
    )));
    expect(err.code).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.message).toContain('Rollout.argoproj.io "checkout" is invalid: spec.replicas: Invalid value');
    expect(err.details?.causes?.[0]?.field).toBe('spec.replicas');
    const stepErr = statusOf(await rejection(api.patchNamespacedCustomObject(
      { ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: [{ op: 'replace', path: '/spec/strategy/canary/steps/0/setWeight', value: '20%' }] },
      jsonPatch,
    )));
    expect(stepErr.details?.causes?.[0]?.field).toBe('spec.strategy.canary.steps[0].setWeight');
    const missing = statusOf(await rejection(api.createNamespacedCustomObject({
      group: 'kargo.akuity.io', version: 'v1alpha1', plural: 'promotions', namespace: 'shop',
      body: { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', metadata: { name: 'p' }, spec: { freight: 'abc' } },
    })));
    expect(missing.details?.causes?.map((c) => c.field)).toEqual(expect.arrayContaining(['spec.stage']));
  });

  it('prunes fields the CRD does not know, as the real API server does', async () => {
    await createRollout('checkout');
    const api = cluster.customObjects();
    const patched = (await api.patchNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { notAField: 1 } } }, merge)) as KubeObject;
    expect(patched.spec.notAField).toBeUndefined();
  });

  it('answers 403 Forbidden from RBAC with the user, verb and resource', async () => {
    await createRollout('checkout');
    const viewer = cluster.customObjects('viewer@sandbox');
    const list = (await viewer.listNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop' })) as { items: unknown[] };
    expect(list.items).toHaveLength(1);
    const err = statusOf(await rejection(viewer.patchNamespacedCustomObjectStatus({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { status: { abort: true } } }, merge)));
    expect(err).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'rollouts.argoproj.io "checkout" is forbidden: User "viewer" cannot patch resource "rollouts/status" in API group "argoproj.io" in the namespace "shop"',
    });
  });

  it('dryRun=All validates and admits without storing; a create carrying a resourceVersion is refused', async () => {
    await createRollout('checkout');
    const api = cluster.customObjects();
    const dry = (await api.patchNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { replicas: 9 } }, dryRun: 'All' }, merge)) as KubeObject;
    expect(dry.spec.replicas).toBe(9);
    expect(((await api.getNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout' })) as KubeObject).spec.replicas).toBe(5);
    const body = rolloutManifest({ namespace: 'shop', name: 'cart', image: 'img:1' });
    body.metadata.resourceVersion = '12';
    const err = statusOf(await rejection(api.createNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', body })));
    expect(err.details?.causes?.[0]?.field).toBe('metadata.resourceVersion');
  });

  it('answers SelfSubjectAccessReviews from the same RBAC rules', async () => {
    const review = (token: string, verb: string) =>
      rawRequest(cluster.server, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', token, {
        method: 'POST',
        contentType: 'application/json',
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, group: 'argoproj.io', resource: 'rollouts', subresource: 'status', namespace: 'shop' } } }),
      }).then((r) => (JSON.parse(r.body) as { status: { allowed: boolean } }).status.allowed);
    expect(await review('viewer-token', 'get')).toBe(true);
    expect(await review('viewer-token', 'patch')).toBe(false);
    expect(await review('admin-token', 'patch')).toBe(true);
  });

  it('serves the scale subresource from the CRD paths', async () => {
    await createRollout('checkout');
    const api = cluster.customObjects();
    const scale = (await api.patchNamespacedCustomObjectScale({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { replicas: 9 } } }, merge)) as { spec: { replicas: number } };
    expect(scale.spec.replicas).toBe(9);
    const obj = (await api.getNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout' })) as KubeObject;
    expect(obj.spec.replicas).toBe(9);
  });

  it('returns 404 NotFound as a Status', async () => {
    const err = statusOf(await rejection(cluster.customObjects().getNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'ghost' })));
    expect(err).toMatchObject({ code: 404, reason: 'NotFound', message: 'rollouts.argoproj.io "ghost" not found' });
  });

  it('watches: ADDED/MODIFIED/DELETED, BOOKMARK, resume from a resourceVersion and 410 when too old', async () => {
    const first = await createRollout('checkout', { env: 'prod' });
    const watch = new Watch(cluster.kubeConfig());
    const events: string[] = [];
    let lastRv = '';
    const controller = await watch.watch(
      '/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts',
      { allowWatchBookmarks: true, labelSelector: 'env=prod', resourceVersion: first.metadata.resourceVersion },
      (type, obj: KubeObject) => {
        events.push(type === 'BOOKMARK' ? 'BOOKMARK' : `${type} ${obj.metadata.name}`);
        lastRv = obj.metadata.resourceVersion ?? lastRv;
      },
      () => undefined,
    );
    const api = cluster.customObjects();
    await createRollout('cart', { env: 'staging' });
    await api.patchNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout', body: { spec: { replicas: 3 } } }, merge);
    await api.deleteNamespacedCustomObject({ ...ROLLOUTS, namespace: 'shop', name: 'checkout' });
    await waitFor(() => events.length >= 2);
    cluster.server.sendBookmarks();
    await waitFor(() => events.includes('BOOKMARK'));
    controller.abort();
    expect(events).toEqual(['MODIFIED checkout', 'DELETED checkout', 'BOOKMARK']);

    // Resume from the creation version: the history is replayed.
    const replay: string[] = [];
    const c2 = await watch.watch('/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts', { resourceVersion: first.metadata.resourceVersion }, (type, obj: KubeObject) => replay.push(`${type} ${obj.metadata.name}`), () => undefined);
    await waitFor(() => replay.length >= 3);
    c2.abort();
    expect(replay).toEqual(['ADDED cart', 'MODIFIED checkout', 'DELETED checkout']);

    // After compaction the same version is gone.
    cluster.store.compact();
    const expired: { type: string; code?: number; reason?: string }[] = [];
    const c3 = await watch.watch('/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts', { resourceVersion: first.metadata.resourceVersion }, (type, obj: { code?: number; reason?: string }) => expired.push({ type, code: obj.code, reason: obj.reason }), () => undefined);
    await waitFor(() => expired.length >= 1);
    c3.abort();
    expect(expired).toEqual([{ type: 'ERROR', code: 410, reason: 'Expired' }]);
    expect(lastRv).not.toBe('');
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error('condition not met');
}

describe('field validation', () => {
  it('warns about unknown fields by default, refuses them with fieldValidation=Strict', async () => {
    const c = await startTestCluster();
    try {
      const body = JSON.stringify({ ...rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'img:1' }), extra: true });
      const warned = await rawRequest(c.server, '/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts', 'admin-token', { method: 'POST', body, contentType: 'application/json' });
      expect(warned.status).toBe(201);
      const strict = await rawRequest(c.server, '/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts?fieldValidation=Strict', 'admin-token', {
        method: 'POST',
        body: body.replace('"checkout"', '"cart"'),
        contentType: 'application/json',
      });
      expect(strict.status).toBe(400);
      expect(JSON.parse(strict.body).message).toBe('Rollout in version "v1alpha1" cannot be handled as a Rollout: strict decoding error: unknown field "extra"');
    } finally {
      await c.stop();
    }
  });
});
