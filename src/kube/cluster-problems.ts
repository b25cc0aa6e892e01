/**
 * The words for a cluster Glidepath cannot use: a kubeconfig or context that is not there, an
 * API server that does not answer, one that refuses our credentials. One home, so `glidepath
 * check` and start-up (src/wiring/cluster-startup.ts) say the same thing with the same fix.
 */
import type { ClusterConfig } from '../config/file.js';
import type { ServerProbe } from './access-check.js';
import { NoKubeconfigError } from './clusters.js';

type Where = Pick<ClusterConfig, 'kubeconfigPath' | 'inCluster'>;

/** Why the cluster's client could not be built (the context and the contexts there are), where from, and the fix. */
export function configureProblem(cluster: Where, err: unknown): string {
  // ClusterClients wraps the reason ("Cluster x cannot be configured: …"); the cause is the reason itself.
  const why = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  // "There is no kubeconfig" says where it looked and what to set.
  if (err instanceof Error && err.cause instanceof NoKubeconfigError) return why;
  const where = cluster.kubeconfigPath ?? (cluster.inCluster ? 'the in-cluster service account' : '$KUBECONFIG or ~/.kube/config');
  return `${why} (kubeconfig: ${where}): fix clusters[].kubeconfigContext or the kubeconfig`;
}

/** The API server's answer in a person's words: `ok` only when it answered and took the credentials. */
export function probeSentence(server: string, probe: ServerProbe): { ok: boolean; text: string } {
  switch (probe.kind) {
    case 'answers':
      return { ok: true, text: `API server ${server} answers (${probe.version})` };
    case 'unreachable':
      return { ok: false, text: `API server ${server} is unreachable (${probe.detail}): check the server address in the kubeconfig and that it is reachable from here` };
    case 'rejected':
      return { ok: false, text: `API server ${server} rejected the credentials (HTTP ${probe.status}): the kubeconfig user's token or certificate is not accepted; renew it` };
    default:
      return { ok: false, text: `API server ${server} failed: ${probe.detail}` };
  }
}
