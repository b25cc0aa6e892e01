/** Manifests as a user (or Argo CD) would apply them, for fixtures and tests. */
import type { KubeObject } from './object.js';

export type CanaryStep = { setWeight: number } | { pause: { duration?: number | string } } | { analysis: { templates: { templateName: string }[] } };

export interface RolloutManifest {
  namespace: string;
  name: string;
  image: string;
  replicas?: number;
  steps?: CanaryStep[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  progressDeadlineSeconds?: number;
  /** nginx traffic routing with <name>-canary / <name>-stable services, so status.canary.weights is written. */
  trafficRouting?: boolean;
}

export const DEFAULT_STEPS: CanaryStep[] = [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }, { pause: { duration: '10m' } }, { setWeight: 80 }, { pause: { duration: 300 } }];

export function rolloutManifest(m: RolloutManifest): KubeObject {
  const app = m.name;
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { namespace: m.namespace, name: m.name, labels: { 'app.kubernetes.io/name': app, ...m.labels }, annotations: { ...m.annotations } },
    spec: {
      replicas: m.replicas ?? 5,
      revisionHistoryLimit: 10,
      ...(m.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: m.progressDeadlineSeconds } : {}),
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: app, image: m.image, ports: [{ containerPort: 8080 }] }] },
      },
      strategy: {
        canary: {
          ...(m.trafficRouting
            ? { canaryService: `${m.name}-canary`, stableService: `${m.name}-stable`, trafficRouting: { nginx: { stableIngress: m.name } } }
            : {}),
          steps: m.steps ?? DEFAULT_STEPS,
        },
      },
    },
  };
}

export function namespaceManifest(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } };
}
