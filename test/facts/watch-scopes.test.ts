/**
 * What the watch source lists and watches for ApplicationSet stages: each ApplicationSet a stage
 * names, by name (a field selector the API server applies), and the Applications of its namespace
 * kept only when that ApplicationSet owns them. Checked against the stand-in API server with the
 * shipped RBAC (list and watch on applicationsets), through client-node.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { ListWatch } from '../../src/facts/watch/list-watch.js';
import { watchScopes } from '../../src/facts/watch/scopes.js';
import { factFromObject } from '../../src/facts/watch/watch-source.js';
import { APPLICATION_SETS, APPLICATIONS, ROLLOUTS } from '../../src/kube/resources.js';
import { applicationObject, applicationSetObject } from '../helpers/appset-world.js';
import { waitFor } from '../helpers/wait.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';

const config = parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod, facts: watch, argocdNamespaces: [argocd] }
  - { name: dev, kubeconfigContext: dev, facts: webhook }
pipelines:
  - name: checkout
    channel: C0CHECKOUT
    stages:
      - { name: staging, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 1 } }
      - { name: prod, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 2 } }
  - name: ledger
    channel: C0LEDGER
    stages:
      - { name: prod, cluster: prod, applicationSet: { namespace: argocd, name: ledger } }
      - { name: dev, cluster: dev, applicationSet: { namespace: argocd, name: not-on-prod } }
  - name: payments
    channel: C0PAYMENTS
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: payments, selector: "app=payments" } }
`);

describe('watch scopes of ApplicationSet stages', () => {
  it('each named ApplicationSet by name, and the Applications it owns; nothing else', () => {
    expect(watchScopes(config, 'prod')).toEqual([
      { resource: ROLLOUTS, namespace: 'payments', labelSelector: 'app=payments' },
      { resource: APPLICATION_SETS, namespace: 'argocd', fieldSelector: 'metadata.name=checkout' },
      { resource: APPLICATION_SETS, namespace: 'argocd', fieldSelector: 'metadata.name=ledger' },
      { resource: APPLICATIONS, namespace: 'argocd', ownedBy: ['checkout', 'ledger'] },
      // Rollout stages bring the tracked Applications, as before.
      { resource: APPLICATIONS, namespace: 'argocd', labelSelector: 'hangar.io/release-tracked=true' },
    ]);
  });

  it('an Application is a fact only when a named ApplicationSet owns it; an ApplicationSet becomes a fact of its steps', () => {
    const children = watchScopes(config, 'prod').find((s) => s.ownedBy)!;
    const owned = factFromObject(children, 'prod', applicationObject('checkout-staging', 7, { sync: 'Synced', health: 'Healthy', revision: 'abc' }), 'watch', 1);
    expect(owned).toMatchObject({ kind: 'application', target: { kind: 'Application', name: 'checkout-staging' }, application: { appSet: 'checkout' } });
    const stranger = applicationObject('other-app', 8, { sync: 'Synced', health: 'Healthy', revision: 'abc' }) as { metadata: { ownerReferences: { name: string }[] } };
    stranger.metadata.ownerReferences[0]!.name = 'someone-else';
    expect(factFromObject(children, 'prod', stranger, 'watch', 1)).toBeUndefined();
    const scope = watchScopes(config, 'prod').find((s) => s.resource.kind === 'ApplicationSet')!;
    const fact = factFromObject(scope, 'prod', applicationSetObject(9, { 'checkout-staging': { status: 'Pending', step: 1, targetRevisions: ['abc'] } }, 2), 'watch', 1);
    expect(fact).toMatchObject({
      kind: 'application-set',
      target: { kind: 'ApplicationSet', cluster: 'prod', namespace: 'argocd', name: 'checkout' },
      appSet: { resourceVersion: '9', stepCount: 2, members: [{ application: 'checkout-staging', status: 'Pending', step: '1', targetRevisions: ['abc'] }] },
    });
  });

  describe('against the API server', () => {
    let world: KubeWorld | undefined;
    afterEach(async () => {
      await world?.close();
      world = undefined;
    });

    it('lists and watches only the ApplicationSet named (with the shipped RBAC)', async () => {
      world = await startKubeWorld();
      const { store } = world;
      const rt = store.registry.byKind('ApplicationSet');
      const appSet = (name: string) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', metadata: { name }, spec: { generators: [], template: { metadata: {}, spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } } } } });
      store.create(rt, 'argocd', appSet('checkout'));
      store.create(rt, 'argocd', appSet('other'));
      const seen: string[] = [];
      const scope = watchScopes(config, 'prod').find((s) => s.fieldSelector === 'metadata.name=checkout')!;
      const watch = new ListWatch(world.clusters.api('prod'), { cluster: 'prod', ...scope }, { onObject: (o, how) => seen.push(`${how} ${(o as { metadata: { name: string } }).metadata.name}`) }).start();
      try {
        await waitFor(async () => seen.includes('list checkout'), 'the list');
        store.mutate(rt, 'argocd', 'other', (o) => void (o.metadata.labels = { touched: 'yes' }));
        store.mutate(rt, 'argocd', 'checkout', (o) => void (o.metadata.labels = { touched: 'yes' }));
        await waitFor(async () => seen.includes('watch checkout'), 'the watch event');
        expect(seen).toEqual(['list checkout', 'watch checkout']);
      } finally {
        await watch.stop();
      }
    });
  });
});
