/**
 * `glidepath check`, one cluster: its kubeconfig context, its API server (answers, unreachable or
 * rejecting our credentials), what Glidepath may do there (a SelfSubjectAccessReview per declared
 * verb in the namespaces of its stages), and Kargo's API with its token when the config names one.
 * The clients are the product's (src/kube/clusters.ts), built the way start-up builds them.
 */
import type { ClusterConfig, ConfigFile } from '../config/file.js';
import type { KargoApiEndpoint } from '../config/kargo-api.js';
import { accessNeeds, describeMissing, missingAccess, probeServer } from '../kube/access-check.js';
import { configureProblem, probeSentence } from '../kube/cluster-problems.js';
import { ClusterClients, type ClusterClient } from '../kube/clusters.js';
import { RBAC_FILE } from '../kube/verbs.js';
import { fail, ok, type CheckLine } from './check-line.js';

function contextLine(subject: string, cluster: ClusterConfig, client: ClusterClient): CheckLine {
  if (cluster.inCluster) return ok(subject, `in-cluster service account (${client.server})`);
  const context = cluster.kubeconfigContext ?? client.api.kubeConfig.getCurrentContext();
  return ok(subject, `kubeconfig context "${context}"${cluster.kubeconfigContext ? '' : ' (the current context: kubeconfigContext is unset)'}`);
}

async function accessLines(subject: string, config: ConfigFile, client: ClusterClient): Promise<CheckLine> {
  const needs = accessNeeds(config, client.name);
  if (needs.length === 0) return ok(subject, 'no stage uses this cluster: no permissions to check');
  const namespaces = [...new Set(needs.map((n) => n.namespace ?? 'the cluster scope'))].sort().join(', ');
  try {
    const report = await missingAccess(client.api, needs);
    if (report.missing.length === 0) return ok(subject, `may do everything src/kube/verbs.ts declares (${report.asked} access reviews in ${namespaces})`);
    return fail(subject, `may not ${describeMissing(report.missing).join('; ')}: grant the rules of ${RBAC_FILE} (kubectl apply -k deploy/rbac) to the kubeconfig's user`);
  } catch (err) {
    return fail(subject, `cannot ask what Glidepath may do (SelfSubjectAccessReview): ${(err as Error).message}`);
  }
}

async function kargoLine(client: ClusterClient): Promise<CheckLine | undefined> {
  const api = client.kargoApi;
  if (!api) return undefined;
  const subject = `kargo api ${client.name}`;
  const answer = await api.checkToken();
  if (answer.kind === 'accepted') return ok(subject, `${api.url} answers and takes the token (HTTP ${answer.status})`);
  if (answer.kind === 'unreachable') return fail(subject, `${api.url} is unreachable (${answer.detail}): check clusters[].kargoApi.url and that Kargo's API server is reachable from here`);
  return fail(subject, `${api.url} rejected the token (HTTP ${answer.status}: ${answer.serverMessage}): renew the token of ${client.name} in KARGO_API_TOKENS`);
}

export async function checkCluster(cluster: ClusterConfig, config: ConfigFile, kargoApi: KargoApiEndpoint | undefined, timeoutMs: number): Promise<CheckLine[]> {
  const subject = `cluster ${cluster.name}`;
  let clients: ClusterClients;
  try {
    // Optional or not, check says what is missing: built as a required cluster.
    clients = new ClusterClients([{ ...cluster, optional: false, ...(kargoApi ? { kargoApiEndpoint: kargoApi } : {}) }], { requestTimeoutMs: timeoutMs });
  } catch (err) {
    return [fail(subject, configureProblem(cluster, err))];
  }
  try {
    const client = clients.get(cluster.name);
    const lines = [contextLine(subject, cluster, client)];
    const probe = await probeServer(client.api);
    const said = probeSentence(client.server, probe);
    lines.push(said.ok ? ok(subject, said.text) : fail(subject, said.text));
    // What Glidepath may do is only worth asking of a server that takes our credentials.
    if (probe.kind === 'answers') lines.push(await accessLines(subject, config, client));
    const kargo = await kargoLine(client);
    if (kargo) lines.push(kargo);
    return lines;
  } finally {
    await clients.close();
  }
}
