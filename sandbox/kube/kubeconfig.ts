/** Kubeconfig files for the stand-in, readable by client-node's `loadFromFile` and by kubectl. */
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigCluster {
  /** Cluster and default context name, e.g. `dev` or `prod`. */
  name: string;
  server: string;
  /** CA of an https server; without it (plain http) TLS verification is declared off, which client-node requires for http. */
  caPem?: string;
  users: { name: string; token: string }[];
  /** User of the context named after the cluster; other users get `<user>@<cluster>`. */
  defaultUser: string;
}

function kubeconfigYaml(clusters: KubeconfigCluster[], currentContext?: string): string {
  const contexts = clusters.flatMap((c) =>
    c.users.map((u) => ({
      name: u.name === c.defaultUser ? c.name : `${u.name}@${c.name}`,
      context: { cluster: c.name, user: `${u.name}@${c.name}` },
    })),
  );
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: clusters.map((c) => ({
      name: c.name,
      cluster: c.caPem
        ? { server: c.server, 'certificate-authority-data': Buffer.from(c.caPem).toString('base64') }
        : { server: c.server, 'insecure-skip-tls-verify': true },
    })),
    users: clusters.flatMap((c) => c.users.map((u) => ({ name: `${u.name}@${c.name}`, user: { token: u.token } }))),
    contexts,
    'current-context': currentContext ?? clusters[0]?.name ?? '',
  });
}

export function writeKubeconfig(path: string, clusters: KubeconfigCluster[], currentContext?: string): void {
  writeFileSync(path, kubeconfigYaml(clusters, currentContext), { mode: 0o600 });
}
