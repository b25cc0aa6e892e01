/** Kargo objects written straight into a stand-in cluster's store, as Kargo would have them (for the command tests). */
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';

export interface KargoObjects {
  stage(name: string, sources: Record<string, unknown>, labels?: Record<string, string>, extra?: Record<string, unknown>): KubeObject;
  freight(name: string, alias: string, created: string, status: Record<string, unknown>): void;
  list(kind: 'Promotion' | 'PromotionRequest' | 'Stage'): KubeObject[];
}

export function kargoObjects(store: ObjectStore, namespace: string): KargoObjects {
  const rt = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');
  return {
    stage(name, sources, labels = {}, extra = {}) {
      return store.create(rt('Stage'), namespace, {
        apiVersion: 'kargo.akuity.io/v1alpha1',
        kind: 'Stage',
        metadata: { name, labels },
        spec: {
          requestedFreight: [{ origin: { kind: 'Warehouse', name: 'shop' }, sources }],
          promotionTemplate: { spec: { steps: [{ uses: 'argocd-update', config: { apps: [{ name: `shop-${name}` }] } }] } },
          ...extra,
        },
      });
    },
    freight(name, alias, created, status) {
      store.create(rt('Freight'), namespace, {
        apiVersion: 'kargo.akuity.io/v1alpha1',
        kind: 'Freight',
        metadata: { name, labels: { 'kargo.akuity.io/alias': alias } },
        alias,
        origin: { kind: 'Warehouse', name: 'shop' },
        images: [{ repoURL: 'registry.example.com/shop/checkout', tag: created.slice(0, 10) }],
      });
      store.mutate(rt('Freight'), namespace, name, (f) => void (f.metadata.creationTimestamp = created));
      store.patch(rt('Freight'), namespace, name, 'merge', { status }, { subresource: 'status' });
    },
    list: (kind) => store.list(rt(kind), namespace).items,
  };
}
