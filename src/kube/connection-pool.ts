/**
 * One undici connection pool per cluster, for every request Glidepath sends it: client-node's
 * generated calls (get, list, patch, create) and our own watch. client-node 2.0.1 builds a new
 * undici Agent on every request of a cluster with TLS options (its applySecurityAuthentication
 * calls createDispatcher each time, uncached), and nothing closes those Agents: under a watch
 * restart loop each request left its own keep-alive socket and heap behind (issue 20).
 *
 * The kubeconfig is still read on every request, by client-node's public applyToHTTPSOptions,
 * because tokens (exec plugins, token files) and even client certificates may change: a change of
 * the TLS material builds a new pool and retires the old one.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { RequestOptions } from 'node:https';
import type { KubeConfig, RequestContext, SecurityAuthentication } from '@kubernetes/client-node';
import type * as UndiciModule from 'undici';
import type { Dispatcher } from 'undici';
import { clientNode } from './client-node.js';
import { impersonating, type KubeIdentity } from './impersonation.js';

type Undici = typeof UndiciModule;
let undiciLoaded: Undici | undefined;

/** The undici client-node itself fetches with (one copy in the tree: package.json pins it), loaded with it, at first use. */
function undici(): Undici {
  return (undiciLoaded ??= createRequire(import.meta.url)('undici') as Undici);
}

/** What one request to the cluster carries: its headers (auth) and the cluster's pool. */
export interface ClusterRequest {
  headers: Record<string, string>;
  dispatcher: Dispatcher;
}

type TlsMaterial = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'servername'>;

function tlsMaterial(options: RequestOptions): TlsMaterial {
  const material: TlsMaterial = {};
  for (const key of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const) {
    if (options[key] !== undefined) Object.assign(material, { [key]: options[key] });
  }
  return material;
}

/** A digest of the TLS material, so a rotated certificate is noticed without keeping a second copy of keys. */
function fingerprint(material: TlsMaterial): string {
  const hash = createHash('sha256');
  for (const [key, value] of Object.entries(material)) {
    hash.update(`${key}\0`);
    for (const part of [value].flat() as unknown[]) hash.update(Buffer.isBuffer(part) ? part : Buffer.from(String(part)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function headersOf(options: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  // A kubeconfig user with username/password: applyToHTTPSOptions gives it as `auth`, for node:https.
  if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  return headers;
}

export class ClusterConnectionPool {
  private dispatcher?: Dispatcher;
  private builtFor?: string;
  private closed = false;

  constructor(
    readonly cluster: string,
    private readonly kubeConfig: KubeConfig,
  ) {}

  /** The API server URL of the kubeconfig's current context. */
  get server(): string {
    return this.kubeConfig.getCurrentCluster()?.server ?? '';
  }

  /** Headers and pool for one request (`as`: sent as that identity). Rejects once the pool is closed. */
  async prepare(as?: KubeIdentity): Promise<ClusterRequest> {
    if (this.closed) throw new Error(`the connections to cluster ${this.cluster} are closed (Glidepath is shutting down)`);
    const options: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const material = tlsMaterial(options);
    const key = fingerprint(material);
    if (!this.dispatcher || key !== this.builtFor) {
      const retired = this.dispatcher;
      this.dispatcher = await this.build(material);
      this.builtFor = key;
      // Requests in flight on the old pool finish; its idle sockets close.
      void retired?.close().catch(() => undefined);
    }
    return { headers: headersOf(options), dispatcher: as ? impersonating(this.dispatcher, as) : this.dispatcher };
  }

  /**
   * Authentication for client-node's generated API: our headers and our pool instead of a new
   * Agent per call; with `as`, every request carries that identity's impersonation headers.
   */
  authentication(as?: KubeIdentity): SecurityAuthentication {
    return {
      getName: () => 'glidepath cluster connection pool',
      applySecurityAuthentication: async (context: RequestContext) => {
        const request = await this.prepare(as);
        for (const [name, value] of Object.entries(request.headers)) context.setHeaderParam(name, value);
        context.setDispatcher(request.dispatcher);
      },
    };
  }

  /** Ends every connection at once (watches included); later requests are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    await dispatcher?.destroy().catch(() => undefined);
  }

  private async build(material: TlsMaterial): Promise<Dispatcher> {
    const { Agent, ProxyAgent } = undici();
    // client-node's own mapping of a kubeconfig cluster to a dispatcher's options (public), so a
    // proxy, skip-TLS-verify or a plain-http refusal behaves exactly as in its generated calls.
    const plan = this.kubeConfig.createDispatcherOptions(this.kubeConfig.getCurrentCluster(), material);
    switch (plan.type) {
      case 'agent':
        return new Agent({ connect: plan.connect });
      case 'proxy':
        return new ProxyAgent({ uri: plan.uri, requestTls: plan.requestTls, connect: plan.connect });
      case 'none':
        // No TLS options: still our own pool, so close() can end its connections.
        return new Agent();
      case 'socks': {
        // client-node's SOCKS connector is not exported: ask it for its dispatcher once and keep it.
        const { RequestContext: Context, HttpMethod } = clientNode();
        const context = new Context(this.server, HttpMethod.GET);
        await this.kubeConfig.applySecurityAuthentication(context);
        const dispatcher = context.getDispatcher();
        if (!dispatcher) throw new Error(`client-node gave no dispatcher for the SOCKS proxy of cluster ${this.cluster}`);
        return dispatcher;
      }
    }
  }
}
