/**
 * deploy/ is what runs Glidepath on a cluster. This renders deploy/base and the fact-sender overlay
 * with `kubectl kustomize` (as a person would apply them), checks every object against the
 * Kubernetes schema of its kind, and checks that the Deployments give Glidepath an environment
 * src/config/env.ts accepts: only variables it reads, valid values, the required ones set, and
 * secrets only from keys the Secret template names.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as models from 'kubernetes-models';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { parse, parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/env.js';
import { parseConfigFile } from '../../src/config/file.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const ENV_SHAPE = envSchema.shape as Record<string, z.ZodType>;

/** Set in every Deployment, although env.ts has a default or lets them be absent. */
const REQUIRED_IN_EVERY_ROLE: Record<string, string> = {
  GLIDEPATH_ROLE: 'without it a process runs every role',
  GLIDEPATH_CONFIG: 'src/main.ts refuses to start without it',
  REDIS_URL: 'the default, 127.0.0.1, is never the Redis of a pod',
  PORT: 'the probes and the Service name the container port',
  // The key must exist (empty means no Slack): a worker without it would only log thread updates.
  SLACK_BOT_TOKEN: 'every role either talks to Slack or queues work for the one that does',
};
const REQUIRED_BY_ROLE: Record<string, string[]> = {
  ingest: ['INGEST_TOKENS'], // without tokens every fact is refused
  worker: [],
  writer: [],
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}
interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: unknown): { validate(): void };
}

/** Every model class of kubernetes-models by "apiVersion/kind", found by walking its exports. */
function modelIndex(): Map<string, ModelClass> {
  const index = new Map<string, ModelClass>();
  const walk = (value: unknown, depth: number): void => {
    if (typeof value === 'function') {
      const cls = value as Partial<ModelClass>;
      if (typeof cls.apiVersion === 'string' && typeof cls.kind === 'string') index.set(`${cls.apiVersion}/${cls.kind}`, value as ModelClass);
      return;
    }
    if (depth < 3 && value && typeof value === 'object') for (const child of Object.values(value)) walk(child, depth + 1);
  };
  walk(models, 0);
  return index;
}
const MODELS = modelIndex();

function schemaProblems(objects: K8sObject[]): string[] {
  return objects.flatMap((o) => {
    const where = `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    const Model = MODELS.get(`${o.apiVersion}/${o.kind}`);
    if (!Model) return [`${where}: no Kubernetes schema for ${o.apiVersion} ${o.kind}`];
    try {
      new Model(o).validate();
      return [];
    } catch (err) {
      return [`${where}: ${err instanceof Error ? err.message : String(err)}`];
    }
  });
}

const readObjects = (text: string): K8sObject[] => parseAllDocuments(text).map((d) => d.toJS() as K8sObject).filter(Boolean);

const KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const NO_KUBECTL = 'kubectl is not on PATH, so deploy/ cannot be rendered here (CI has it)';

function kustomize(dir: string): K8sObject[] {
  const run = spawnSync('kubectl', ['kustomize', `${DEPLOY}${dir}`], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kubectl kustomize deploy/${dir} failed: ${run.stderr}`);
  return readObjects(run.stdout);
}

const secretTemplate = readObjects(readFileSync(`${DEPLOY}base/secret.template.yaml`, 'utf8'));
const envSecret = secretTemplate.find((o) => o.metadata.name === 'glidepath') as ISecret & K8sObject;

/** The webhook service of a rendered notification ConfigMap, beside the one in deploy/notifications/. */
function webhookService(cm: IConfigMap): { rendered: { url: string }; shipped: { url: string } } {
  const file = cm.metadata!.name === 'argocd-notifications-cm' ? 'argocd-notifications-cm.yaml' : 'argo-rollouts-notification-configmap.yaml';
  const shipped = readObjects(readFileSync(`${DEPLOY}notifications/${file}`, 'utf8'))[0] as IConfigMap & K8sObject;
  return { rendered: parse(cm.data!['service.webhook.glidepath']!), shipped: parse(shipped.data!['service.webhook.glidepath']!) };
}
/** Overlays change only the URL: headers (the Bearer token) stay as deploy/notifications has them. */
function expectOnlyUrlChanged(cm: IConfigMap, urlPrefix: string): void {
  const { rendered, shipped } = webhookService(cm);
  expect(rendered.url.startsWith(urlPrefix), rendered.url).toBe(true);
  expect(new URL(rendered.url).pathname).toBe(new URL(shipped.url).pathname);
  expect({ ...rendered, url: '' }).toEqual({ ...shipped, url: '' });
}

const containerOf = (d: IDeployment) => d.spec!.template.spec!.containers[0]!;
const roleOf = (d: IDeployment) => d.spec!.template.metadata!.labels!['app.kubernetes.io/component'] as string;
const literal = (env: IEnvVar[], name: string) => env.find((e) => e.name === name)?.value;

describe('deploy/base/secret.template.yaml', () => {
  it('names only environment variables Glidepath reads, with no values filled in', () => {
    expect(schemaProblems(secretTemplate)).toEqual([]);
    const keys = Object.keys(envSecret.stringData ?? {});
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => !(k in ENV_SHAPE))).toEqual([]);
    expect(Object.values(envSecret.stringData ?? {}).filter((v) => v !== '')).toEqual([]);
    for (const s of secretTemplate) expect(s.data).toBeUndefined();
  });
});

describe('deploy/ rendered with kubectl kustomize', () => {
  let base: K8sObject[] = [];
  let sender: K8sObject[] = [];
  let deployments: IDeployment[] = [];
  beforeAll(() => {
    if (!KUBECTL) return;
    base = kustomize('base');
    sender = kustomize('overlays/fact-sender');
    deployments = base.filter((o) => o.kind === 'Deployment') as unknown as IDeployment[];
  });
  beforeEach((ctx) => ctx.skip(!KUBECTL, NO_KUBECTL));

  it('every object of the base and the fact-sender overlay passes the Kubernetes schema of its kind', () => {
    expect(base.length).toBeGreaterThan(10);
    expect(schemaProblems(base)).toEqual([]);
    expect(schemaProblems(sender)).toEqual([]);
  });

  it('runs one Deployment per role, as non-root with a read-only root filesystem and /tmp on an emptyDir', () => {
    expect(deployments.map(roleOf).sort()).toEqual(['ingest', 'worker', 'writer']);
    for (const d of deployments) {
      const pod = d.spec!.template.spec!;
      const c = containerOf(d);
      expect(literal(c.env ?? [], 'GLIDEPATH_ROLE')).toBe(roleOf(d));
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0); // the image's USER is a name, which runAsNonRoot cannot verify
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    }
  });

  it('probes /healthz for liveness and /readyz for readiness on PORT, and requests and limits resources', () => {
    for (const d of deployments) {
      const c = containerOf(d);
      const port = c.ports?.find((p) => p.name === 'http');
      expect(String(port?.containerPort)).toBe(literal(c.env ?? [], 'PORT'));
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      for (const kind of ['requests', 'limits'] as const) {
        expect(Object.keys(c.resources?.[kind] ?? {}).sort(), `${d.metadata!.name} ${kind}`).toEqual(['cpu', 'memory']);
      }
    }
  });

  it('sets only environment variables Glidepath reads, each with a value it accepts', () => {
    for (const d of deployments) {
      for (const e of containerOf(d).env ?? []) {
        const where = `${d.metadata!.name} ${e.name}`;
        expect(ENV_SHAPE[e.name], `${where} is not in src/config/env.ts`).toBeDefined();
        if (e.value !== undefined) expect(ENV_SHAPE[e.name]!.safeParse(e.value).success, `${where}=${e.value}`).toBe(true);
      }
    }
  });

  it('sets every required variable, from a literal or a secret key that must exist', () => {
    const requiredByZod = Object.keys(ENV_SHAPE).filter((k) => !ENV_SHAPE[k]!.safeParse(undefined).success);
    for (const d of deployments) {
      const env = containerOf(d).env ?? [];
      const required = [...requiredByZod, ...Object.keys(REQUIRED_IN_EVERY_ROLE), ...(REQUIRED_BY_ROLE[roleOf(d)] ?? [])];
      for (const name of required) {
        const e = env.find((v) => v.name === name);
        expect(e, `${d.metadata!.name} does not set ${name}`).toBeDefined();
        if (e?.valueFrom) expect(e.valueFrom.secretKeyRef?.optional, `${d.metadata!.name} ${name}`).toBe(false);
      }
    }
  });

  it('reads secrets only from keys the Secret template names, in a Secret the base does not render', () => {
    const keys = new Set(Object.keys(envSecret.stringData ?? {}));
    const refs = deployments.flatMap((d) => (containerOf(d).env ?? []).flatMap((e) => (e.valueFrom ? [e.valueFrom] : [])));
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.secretKeyRef?.name).toBe(envSecret.metadata.name);
      expect(keys.has(ref.secretKeyRef!.key)).toBe(true);
    }
    // Applying the base must never overwrite the real values with the template's empty ones.
    expect(base.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('mounts the ConfigMap at GLIDEPATH_CONFIG, with a config Glidepath accepts and kubeconfigs it can read', () => {
    for (const d of deployments) {
      const c = containerOf(d);
      const pod = d.spec!.template.spec!;
      const path = literal(c.env ?? [], 'GLIDEPATH_CONFIG') as string;
      const mount = c.volumeMounts?.find((m) => m.mountPath === posix.dirname(path));
      const volume = pod.volumes?.find((v) => v.name === mount?.name);
      const cm = base.find((o) => o.kind === 'ConfigMap' && o.metadata.name === volume?.configMap?.name) as (IConfigMap & K8sObject) | undefined;
      const text = cm?.data?.[posix.basename(path)];
      expect(text, `${d.metadata!.name}: no ConfigMap key at ${path}`).toBeDefined();
      const config = parseConfigFile(text as string, 'glidepath-config');
      for (const cluster of config.clusters.filter((k) => k.kubeconfigPath)) {
        const kubeMount = c.volumeMounts?.find((m) => cluster.kubeconfigPath!.startsWith(`${m.mountPath}/`));
        const kubeVolume = pod.volumes?.find((v) => v.name === kubeMount?.name);
        expect(kubeVolume?.secret?.secretName, `${cluster.name}: ${cluster.kubeconfigPath} is not mounted`).toBeDefined();
        expect(secretTemplate.map((s) => s.metadata.name)).toContain(kubeVolume!.secret!.secretName);
      }
    }
  });

  it('the ingest Service, its network policy and this cluster\'s Argo notifications all reach the ingest pods', () => {
    const svc = base.find((o) => o.kind === 'Service') as IService & K8sObject;
    const selected = deployments.filter((d) => Object.entries(svc.spec!.selector!).every(([k, v]) => d.spec!.template.metadata!.labels![k] === v));
    expect(selected.map(roleOf)).toEqual(['ingest']);
    const policies = base.filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[];
    const fromArgo = policies
      .filter((p) => Object.entries(p.spec!.podSelector.matchLabels ?? {}).every(([k, v]) => selected[0]!.spec!.template.metadata!.labels![k] === v))
      .flatMap((p) => p.spec!.ingress ?? [])
      .flatMap((rule) => rule.from ?? [])
      .flatMap((peer) => peer.namespaceSelector?.matchExpressions?.flatMap((m) => m.values ?? []) ?? []);
    expect(fromArgo).toEqual(expect.arrayContaining(['argocd', 'argo-rollouts']));
    const host = `http://${svc.metadata!.name}.${svc.metadata!.namespace}.svc/`;
    const notifications = base.filter((o) => o.kind === 'ConfigMap' && o.metadata.namespace !== 'glidepath') as unknown as IConfigMap[];
    expect(notifications.map((n) => n.metadata!.namespace).sort()).toEqual(['argo-rollouts', 'argocd']);
    for (const n of notifications) expectOnlyUrlChanged(n, host);
  });

  it('a PodDisruptionBudget covers every Deployment', () => {
    const pdbs = base.filter((o) => o.kind === 'PodDisruptionBudget') as unknown as { spec: { selector: { matchLabels: Record<string, string> } } }[];
    for (const d of deployments) {
      const labels = d.spec!.template.metadata!.labels!;
      expect(pdbs.filter((p) => Object.entries(p.spec.selector.matchLabels).every(([k, v]) => labels[k] === v)), d.metadata!.name).toHaveLength(1);
    }
  });

  it('the fact-sender overlay sends facts and lets Glidepath act, but runs no Glidepath', () => {
    expect(sender.filter((o) => ['Deployment', 'Service', 'Pod', 'StatefulSet'].includes(o.kind))).toEqual([]);
    const kinds = sender.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      'ClusterRole /glidepath',
      'ClusterRole /glidepath-prune-notified',
      'ClusterRoleBinding /glidepath',
      'ClusterRoleBinding /glidepath-prune-notified',
      'ConfigMap argo-rollouts/argo-rollouts-notification-configmap',
      'ConfigMap argocd/argocd-notifications-cm',
      'Namespace /glidepath',
      'Secret glidepath/glidepath-prune-notified-token',
      'Secret glidepath/glidepath-token',
      'ServiceAccount glidepath/glidepath',
      'ServiceAccount glidepath/glidepath-prune-notified',
    ]);
    for (const cm of sender.filter((o) => o.kind === 'ConfigMap')) expectOnlyUrlChanged(cm as unknown as IConfigMap, 'https://');
    for (const token of sender.filter((o) => o.kind === 'Secret') as (ISecret & K8sObject)[]) {
      expect(token.type).toBe('kubernetes.io/service-account-token');
      expect(token.data ?? token.stringData).toBeUndefined();
    }
  });
});
