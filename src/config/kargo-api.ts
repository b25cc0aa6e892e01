/**
 * Kargo's API per cluster: the URL from the config file (`clusters[].kargoApi.url`), the token from
 * the environment (`KARGO_API_TOKENS=cluster=token`), never the other way round. Checked together
 * at start-up: a URL without its token, or a token for a cluster that has no URL, stops Glidepath
 * with the fix named, instead of a promote that fails later.
 */
import type { Env } from './env.js';
import { ConfigError } from './errors.js';
import type { ConfigFile } from './file.js';

export interface KargoApiEndpoint {
  /** `https://kargo.example.com` (http only for a loopback address). */
  url: string;
  /** Bearer token (a Kargo API token, or a Kubernetes ServiceAccount token Kargo accepts). */
  token: string;
}

export function kargoApiEndpoints(config: Pick<ConfigFile, 'clusters'>, env: Pick<Env, 'KARGO_API_TOKENS'>): Map<string, KargoApiEndpoint> {
  const problems: string[] = [];
  const out = new Map<string, KargoApiEndpoint>();
  for (const cluster of config.clusters) {
    const token = env.KARGO_API_TOKENS.get(cluster.name);
    if (cluster.kargoApi && !token) problems.push(`KARGO_API_TOKENS: cluster "${cluster.name}" has kargoApi.url (${cluster.kargoApi.url}) but no token; add ${cluster.name}=<token> (a Kargo API token whose role may promote the Stages)`);
    if (cluster.kargoApi && token) out.set(cluster.name, { url: cluster.kargoApi.url, token });
  }
  for (const name of env.KARGO_API_TOKENS.keys()) {
    const cluster = config.clusters.find((c) => c.name === name);
    if (!cluster) problems.push(`KARGO_API_TOKENS: "${name}" is not a configured cluster (clusters: ${config.clusters.map((c) => c.name).join(', ') || 'none'})`);
    else if (!cluster.kargoApi) problems.push(`KARGO_API_TOKENS: cluster "${name}" has a token but no kargoApi.url in the config; set clusters[].kargoApi.url or drop the token`);
  }
  if (problems.length > 0) throw new ConfigError('environment', problems);
  return out;
}
