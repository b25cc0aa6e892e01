/** Shared set-up for tests against the stand-in API server. */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { ADMIN_RULES, type SandboxUser } from '../../sandbox/kube/auth.js';
import type { KubeServer } from '../../sandbox/kube/server.js';
import { startStandInCluster, type StandInCluster, type StandInClusterOptions } from '../../sandbox/kube/stand-in.js';

export const USERS: SandboxUser[] = [
  { name: 'admin', token: 'admin-token', rules: ADMIN_RULES },
  {
    name: 'viewer',
    token: 'viewer-token',
    rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['argoproj.io', 'kargo.akuity.io', ''], resources: ['*'] }],
  },
];

export interface TestCluster extends StandInCluster {
  kubeconfigPath: string;
  customObjects(context?: string): CustomObjectsApi;
}

/** A stand-in cluster named `sandbox` with admin and viewer, namespace `shop` unless told otherwise, no controllers unless asked. */
export async function startTestCluster(options: Partial<StandInClusterOptions> = {}): Promise<TestCluster> {
  const cluster = await startStandInCluster({ name: 'sandbox', namespaces: ['shop'], ...options, users: options.users ?? USERS, defaultUser: 'admin' });
  return { ...cluster, kubeconfigPath: cluster.kubeconfigPath!, customObjects: (context) => cluster.kubeConfig(context).makeApiClient(CustomObjectsApi) };
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
