/** Shared set-up for tests against the stand-in API server. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { ADMIN_RULES, type SandboxUser } from '../../sandbox/kube/auth.js';
import { namespaceManifest } from '../../sandbox/kube/builders.js';
import type { Clock } from '../../sandbox/kube/clock.js';
import { ResourceRegistry } from '../../sandbox/kube/resources.js';
import { startKubeServer, type KubeServer } from '../../sandbox/kube/server.js';
import { ObjectStore } from '../../sandbox/kube/store.js';

export const USERS: SandboxUser[] = [
  { name: 'admin', token: 'admin-token', rules: ADMIN_RULES },
  {
    name: 'viewer',
    token: 'viewer-token',
    rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['argoproj.io', 'kargo.akuity.io', ''], resources: ['*'] }],
  },
];

export interface TestCluster {
  server: KubeServer;
  store: ObjectStore;
  kubeconfigPath: string;
  kubeConfig(context?: string): KubeConfig;
  customObjects(context?: string): CustomObjectsApi;
}

export async function startTestCluster(options: { users?: SandboxUser[]; namespaces?: string[]; clock?: Clock; historyLimit?: number } = {}): Promise<TestCluster> {
  const store = new ObjectStore(new ResourceRegistry(), { clock: options.clock, historyLimit: options.historyLimit });
  const nsType = store.registry.byKind('Namespace');
  for (const ns of options.namespaces ?? ['shop']) store.create(nsType, undefined, namespaceManifest(ns));
  const server = await startKubeServer({ store, users: options.users ?? USERS });
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'glidepath-kube-')), 'kubeconfig');
  server.writeKubeconfig(kubeconfigPath, 'sandbox', 'admin');
  const kubeConfig = (context?: string): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    if (context) kc.setCurrentContext(context);
    return kc;
  };
  return { server, store, kubeconfigPath, kubeConfig, customObjects: (context) => kubeConfig(context).makeApiClient(CustomObjectsApi) };
}

/** The Kubernetes Status carried by a client-node ApiException. */
export function statusOf(err: unknown): { code: number; reason: string; message: string; details?: { causes?: { field?: string; message: string }[] } } {
  const e = err as { code?: number; body?: unknown };
  const body = typeof e.body === 'string' ? (JSON.parse(e.body) as object) : (e.body as object);
  return { code: e.code ?? 0, ...(body as { reason: string; message: string }) };
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** A plain HTTPS request to the stand-in, trusting its sandbox CA (for endpoints client-node has no method for). */
export async function rawRequest(
  server: KubeServer,
  path: string,
  token: string,
  init: { method?: string; body?: string; contentType?: string } = {},
): Promise<{ status: number; body: string }> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      {
        method: init.method ?? 'GET',
        ca: server.caPem,
        headers: { Authorization: `Bearer ${token}`, ...(init.contentType ? { 'Content-Type': init.contentType } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
