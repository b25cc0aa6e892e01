/**
 * One client per configured cluster, built from the config file: a kubeconfig context (from a
 * given file or the default one) or the in-cluster service account. Each cluster keeps the Argo
 * CD namespaces it was configured with, since one cluster may run several Argo CD instances.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
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
  /** Configured without it when it cannot be (see the config's `optional`); tried again at each use. */
  optional?: boolean;
  /** Kargo's API with its token (the config holds only the URL: see src/config/kargo-api.ts). */
  kargoApiEndpoint?: KargoApiEndpoint;
};

/** Neither a kubeconfig file nor a pod's service account: its message carries the fix. */
export class NoKubeconfigError extends Error {
  override readonly name = 'NoKubeconfigError';
}

export function kubeConfigFor(cluster: ClusterSource, options: ClusterClientsOptions = {}): KubeConfig {
  const kc = new (clientNode().KubeConfig)();
  try {
    if (cluster.inCluster) {
      kc.loadFromCluster();
      return kc;
    }
    const path = cluster.kubeconfigPath ?? options.defaultKubeconfigPath;
    if (path) kc.loadFromFile(path);
    else if (defaultKubeconfigFiles().length > 0) kc.loadFromDefault();
    else if (process.env.KUBERNETES_SERVICE_HOST && !cluster.kubeconfigContext) kc.loadFromCluster();
    // client-node would make up a context named "loaded-context" for localhost:8080: say there is no kubeconfig instead.
    else throw new NoKubeconfigError(`there is no kubeconfig (KUBECONFIG is unset and ${join(homedir(), '.kube', 'config')} does not exist): set clusters[].kubeconfigPath or KUBECONFIG${cluster.kubeconfigContext ? '' : ', or inCluster: true in a pod'}`);
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

/** The files client-node's loadFromDefault would read ($KUBECONFIG's list, else ~/.kube/config), those that exist. */
function defaultKubeconfigFiles(): string[] {
  const listed = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  return (listed.length > 0 ? listed : [join(homedir(), '.kube', 'config')]).filter((file) => existsSync(file));
}

export class ClusterClients {
  private readonly clients = new Map<string, ClusterClient>();
  /** Optional clusters that could not be configured: the source to try again, and why it failed last. */
  private readonly unavailable = new Map<string, { source: ClusterSource; error: KubeActionError }>();
  private readonly timeout: number;

  constructor(
    clusters: readonly ClusterSource[],
    private readonly options: ClusterClientsOptions = {},
  ) {
    this.timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    for (const cluster of clusters) {
      try {
        this.clients.set(cluster.name, this.build(cluster));
      } catch (err) {
        if (!cluster.optional || !(err instanceof KubeActionError)) throw err;
        this.unavailable.set(cluster.name, { source: cluster, error: err });
      }
    }
  }

  private build(cluster: ClusterSource): ClusterClient {
    const kc = kubeConfigFor(cluster, this.options);
    return {
      name: cluster.name,
      api: new KubeApi(cluster.name, kc, this.timeout, this.options.watch),
      argocdNamespaces: cluster.argocdNamespaces ?? ['argocd'],
      server: kc.getCurrentCluster()?.server ?? '',
      ...(cluster.kargoApiEndpoint ? { kargoApi: new KargoApiClient({ cluster: cluster.name, ...cluster.kargoApiEndpoint, timeoutMs: this.timeout }) } : {}),
    };
  }

  /** Every configured cluster, those that could not be configured (optional ones) included. */
  names(): string[] {
    return [...this.clients.keys(), ...this.unavailable.keys()];
  }

  /** Optional clusters that cannot be configured now, with why. */
  unconfigured(): { name: string; error: KubeActionError }[] {
    return [...this.unavailable].map(([name, { error }]) => ({ name, error }));
  }

  get(name: string): ClusterClient {
    const client = this.clients.get(name);
    if (client) return client;
    const missing = this.unavailable.get(name);
    if (missing) {
      // An optional cluster's kubeconfig may have been written since (a mounted Secret, the sandbox's clusters).
      try {
        const built = this.build(missing.source);
        this.unavailable.delete(name);
        this.clients.set(name, built);
        return built;
      } catch (err) {
        if (err instanceof KubeActionError) missing.error = err;
        throw err;
      }
    }
    throw new KubeActionError('unknown-cluster', `No cluster named "${name}" is configured (clusters: ${this.names().join(', ') || 'none'})`);
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
