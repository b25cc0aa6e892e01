/**
 * One client per configured cluster, built from the config file: a kubeconfig context (from a
 * given file or the default one) or the in-cluster service account. Each cluster keeps the Argo
 * CD namespaces it was configured with, since one cluster may run several Argo CD instances.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { clientNode } from './client-node.js';
import type { ClusterConfig } from '../config/file.js';
import { KubeApi, type KubeApiWatchOptions } from './api.js';
import { KubeActionError } from './errors.js';
import { KargoApiClient, type KargoApiEndpoint } from './kargo-api.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface ClusterClient {
  name: string;
  api: KubeApi;
  argocdNamespaces: readonly string[];
  /** API server URL, for messages and logs. */
  server: string;
  /** Kargo's own API, when configured (target-aware Stages are promoted through it). */
  kargoApi?: KargoApiClient;
}

export interface ClusterClientsOptions {
  requestTimeoutMs?: number;
  /** Kubeconfig used by clusters that name a context but no file (default: $KUBECONFIG or ~/.kube/config). */
  defaultKubeconfigPath?: string;
  /** Bounds of every watch stream (line cap, byte budget per stream); defaults in src/kube/watch-lines.ts. */
  watch?: KubeApiWatchOptions;
}

type ClusterSource = Pick<ClusterConfig, 'name' | 'kubeconfigContext' | 'kubeconfigPath' | 'inCluster'> & {
  argocdNamespaces?: string[];
  /** Kargo's API with its token (the config holds only the URL: see src/config/kargo-api.ts). */
  kargoApiEndpoint?: KargoApiEndpoint;
};

export function kubeConfigFor(cluster: ClusterSource, options: ClusterClientsOptions = {}): KubeConfig {
  const kc = new (clientNode().KubeConfig)();
  try {
    if (cluster.inCluster) {
      kc.loadFromCluster();
      return kc;
    }
    const path = cluster.kubeconfigPath ?? options.defaultKubeconfigPath;
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    if (cluster.kubeconfigContext) {
      if (!kc.getContextObject(cluster.kubeconfigContext)) {
        const known = kc.getContexts().map((c) => c.name).join(', ') || 'none';
        throw new Error(`context "${cluster.kubeconfigContext}" is not in the kubeconfig (contexts: ${known})`);
      }
      kc.setCurrentContext(cluster.kubeconfigContext);
    }
    if (!kc.getCurrentCluster()) throw new Error('the kubeconfig has no current cluster');
  } catch (err) {
    throw new KubeActionError('unknown-cluster', `Cluster ${cluster.name} cannot be configured: ${err instanceof Error ? err.message : String(err)}`, undefined, undefined, undefined, { cause: err });
  }
  return kc;
}

export class ClusterClients {
  private readonly clients = new Map<string, ClusterClient>();

  constructor(clusters: readonly ClusterSource[], options: ClusterClientsOptions = {}) {
    const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    for (const cluster of clusters) {
      const kc = kubeConfigFor(cluster, options);
      this.clients.set(cluster.name, {
        name: cluster.name,
        api: new KubeApi(cluster.name, kc, timeout, options.watch),
        argocdNamespaces: cluster.argocdNamespaces ?? ['argocd'],
        server: kc.getCurrentCluster()?.server ?? '',
        ...(cluster.kargoApiEndpoint ? { kargoApi: new KargoApiClient({ cluster: cluster.name, ...cluster.kargoApiEndpoint, timeoutMs: timeout }) } : {}),
      });
    }
  }

  names(): string[] {
    return [...this.clients.keys()];
  }

  get(name: string): ClusterClient {
    const client = this.clients.get(name);
    if (!client) throw new KubeActionError('unknown-cluster', `No cluster named "${name}" is configured (clusters: ${this.names().join(', ') || 'none'})`);
    return client;
  }

  /** The cluster's API, for operations that take one. */
  api(name: string): KubeApi {
    return this.get(name).api;
  }

  /** Ends every watch and connection to every cluster (shutdown); calls after it fail. */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.api.close()));
  }
}
