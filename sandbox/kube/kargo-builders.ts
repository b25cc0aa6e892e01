/** Kargo objects as a project would declare them, for fixtures and tests. */
import { createHash } from 'node:crypto';
import type { KubeObject } from './object.js';

export function warehouseManifest(namespace: string, name: string, repoURL: string): KubeObject {
  return {
    apiVersion: 'kargo.akuity.io/v1alpha1',
    kind: 'Warehouse',
    metadata: { namespace, name },
    spec: { interval: '5m0s', subscriptions: [{ image: { repoURL, imageSelectionStrategy: 'SemVer' } }] },
  };
}

/** Freight names are content hashes (40 hex characters), as Kargo derives them. */
export function freightManifest(namespace: string, warehouse: string, image: { repoURL: string; tag: string; digest?: string; annotations?: Record<string, string> }, alias?: string): KubeObject {
  const name = createHash('sha1').update(`${warehouse}\n${image.repoURL}:${image.tag}`).digest('hex');
  return {
    apiVersion: 'kargo.akuity.io/v1alpha1',
    kind: 'Freight',
    metadata: { namespace, name, labels: alias ? { 'kargo.akuity.io/alias': alias } : {} },
    ...(alias ? { alias } : {}),
    origin: { kind: 'Warehouse', name: warehouse },
    // Kargo records the image's OCI annotations (a release id label may be one).
    images: [{ repoURL: image.repoURL, tag: image.tag, ...(image.digest ? { digest: image.digest } : {}), ...(image.annotations ? { annotations: image.annotations } : {}) }],
  };
}

export interface StageManifest {
  namespace: string;
  name: string;
  warehouse: string;
  /** Upstream Stages; none = Freight comes straight from the Warehouse. */
  upstream?: string[];
  /** Argo CD Applications the promotion syncs (`argocd-update`). */
  apps?: { name: string; namespace?: string }[];
  labels?: Record<string, string>;
  /** Verify each Freight with an AnalysisTemplate once the Stage is Healthy. */
  verification?: boolean;
  /** Kargo main: a target-aware Stage selecting the Targets with these labels (`spec.targets.selectors[].matchLabels`). */
  targets?: Record<string, string>[];
}

/** Kargo main: a Target (one destination of a target-aware Stage) with its labels and params. */
export function targetManifest(namespace: string, name: string, labels: Record<string, string>, params: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Target', metadata: { namespace, name, labels }, spec: { params: { name, ...params } } };
}

export function stageManifest(m: StageManifest): KubeObject {
  return {
    apiVersion: 'kargo.akuity.io/v1alpha1',
    kind: 'Stage',
    metadata: { namespace: m.namespace, name: m.name, labels: m.labels ?? {} },
    spec: {
      requestedFreight: [{ origin: { kind: 'Warehouse', name: m.warehouse }, sources: m.upstream?.length ? { stages: m.upstream } : { direct: true } }],
      promotionTemplate: {
        spec: {
          steps: [
            { uses: 'git-clone', config: { repoURL: 'https://git.example.com/shop/deploy.git', checkout: [{ branch: 'main', path: './src' }] } },
            { uses: 'kustomize-set-image', as: 'update-image', config: { path: `./src/${m.name}`, images: [{ image: 'registry.example.com/shop/checkout' }] } },
            { uses: 'git-commit', config: { path: './src', message: 'promote' } },
            { uses: 'git-push', config: { path: './src' } },
            { uses: 'argocd-update', config: { apps: m.apps ?? [] } },
          ],
        },
      },
      ...(m.verification ? { verification: { analysisTemplates: [{ name: 'smoke-test' }] } } : {}),
      ...(m.targets ? { targets: { selectors: m.targets.map((matchLabels) => ({ matchLabels })) } } : {}),
    },
  };
}

export function promotionRequest(namespace: string, stage: string, freight: string): KubeObject {
  return {
    apiVersion: 'kargo.akuity.io/v1alpha1',
    kind: 'Promotion',
    metadata: { namespace, name: '', generateName: 'promo-' },
    spec: { stage, freight },
  };
}
