/** client-node's informer (list + watch, relist on 410) against the stand-in, as Glidepath's watcher uses it. */
import { makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { startTestCluster, type TestCluster } from './support.js';
import { waitFor } from '../helpers/wait.js';

let cluster: TestCluster;
beforeEach(async () => {
  cluster = await startTestCluster();
});
afterEach(async () => {
  await cluster.stop();
});

describe('client-node informer against the stand-in', () => {
  it('lists, watches, and after the watch history is compacted away relists on 410 without losing a change', async () => {
    const { store } = cluster;
    const rt = store.registry.byKind('Rollout');
    const add = (name: string, env = 'prod') => store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name, image: 'img:1', labels: { env } }));
    add('checkout');
    add('cart');
    add('search', 'dev');
    const api = cluster.customObjects();
    const informer = makeInformer<KubernetesObject>(
      cluster.kubeConfig(),
      '/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts',
      () => api.listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop', labelSelector: 'env=prod' }) as Promise<KubernetesListObject<KubernetesObject>>,
      'env=prod',
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    await informer.start();
    try {
      await waitFor(async () => seen.length >= 2, 'initial list');
      store.patch(rt, 'shop', 'checkout', 'merge', { spec: { replicas: 2 } });
      await waitFor(async () => seen.includes('update checkout'), 'update');

      // The connection drops and, meanwhile, history is compacted: the resume gets 410 and the informer relists.
      cluster.server.dropWatches();
      store.delete(rt, 'shop', 'cart');
      add('payments');
      store.compact();
      await waitFor(async () => seen.includes('delete cart') && seen.includes('add payments'), 'relist after 410', 20_000);
      expect(informer.list('shop').map((o) => o.metadata?.name).sort()).toEqual(['checkout', 'payments']);
      expect(seen.slice(0, 2).sort()).toEqual(['add cart', 'add checkout']);
    } finally {
      await informer.stop();
    }
  }, 30_000);
});
