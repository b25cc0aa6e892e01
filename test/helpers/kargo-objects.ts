/**
 * Kargo objects written straight into a stand-in cluster's store, as Kargo would have them (for the
 * command and src/kube tests): a Stage with one promotion step, or a control-flow Stage with none;
 * a Freight with its alias label and creation time, and its status when one is given.
 */
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';

export interface KargoObjects {
  stage(name: string, sources: Record<string, unknown>, labels?: Record<string, string>, extra?: Record<string, unknown>): KubeObject;
  /** A Stage without a promotion template (Kargo cannot promote to it; the CRD wants at least one step in a template). */
  controlFlowStage(name: string, sources: Record<string, unknown>, labels?: Record<string, string>): KubeObject;
  freight(name: string, alias: string, created: string, status?: Record<string, unknown>): void;
  list(kind: 'Promotion' | 'PromotionRequest' | 'Stage'): KubeObject[];
}

export function kargoObjects(store: ObjectStore, namespace: string): KargoObjects {
  const rt = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');
  const createStage = (name: string, sources: Record<string, unknown>, labels: Record<string, string>, spec: Record<string, unknown>): KubeObject =>
    store.create(rt('Stage'), namespace, {
      apiVersion: 'kargo.akuity.io/v1alpha1',
      kind: 'Stage',
      metadata: { name, labels },
      spec: { requestedFreight: [{ origin: { kind: 'Warehouse', name: 'shop' }, sources }], ...spec },
    });
  return {
    stage(name, sources, labels = {}, extra = {}) {
      return createStage(name, sources, labels, { promotionTemplate: { spec: { steps: [{ uses: 'argocd-update', config: { apps: [{ name: `shop-${name}` }] } }] } }, ...extra });
    },
    controlFlowStage: (name, sources, labels = {}) => createStage(name, sources, labels, {}),
    freight(name, alias, created, status = {}) {
      store.create(rt('Freight'), namespace, {
        apiVersion: 'kargo.akuity.io/v1alpha1',
        kind: 'Freight',
        metadata: { name, labels: { 'kargo.akuity.io/alias': alias } },
        alias,
        origin: { kind: 'Warehouse', name: 'shop' },
        images: [{ repoURL: 'registry.example.com/shop/checkout', tag: created.slice(0, 10) }],
      });
      // creationTimestamp is the store's clock: stamp the order explicitly.
      store.mutate(rt('Freight'), namespace, name, (f) => void (f.metadata.creationTimestamp = created));
      if (Object.keys(status).length > 0) store.patch(rt('Freight'), namespace, name, 'merge', { status }, { subresource: 'status' });
    },
    list: (kind) => store.list(rt(kind), namespace).items,
  };
}
