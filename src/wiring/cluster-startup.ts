/**
 * What start-up finds out about the clusters before it says it is listening: each cluster's
 * kubeconfig and context (a missing one stops start-up, naming the context and those there are,
 * unless the cluster is `optional`), and whether its API server answers (unreachable: said, and
 * start-up goes on, since the watch and the actions retry; credentials refused: stops start-up,
 * as a refused Slack token does, unless optional). The words are `glidepath check`'s
 * (src/kube/cluster-problems.ts).
 */
import { StartupError } from '../config/errors.js';
import type { Role } from '../config/env.js';
import type { ClusterConfig } from '../config/file.js';
import { probeServer, type ServerProbe } from '../kube/access-check.js';
import { configureProblem, probeSentence } from '../kube/cluster-problems.js';
import { kubeConfigFor, type ClusterClients } from '../kube/clusters.js';
import { answerWithin } from '../obs/deadline.js';
import type { Logger } from '../obs/logger.js';

/** Whether the watch reads any cluster of `config` (asked again at a reload: a reloaded config may watch one this did not). */
export const watchesClusters = (config: { clusters: readonly ClusterConfig[] }): boolean => config.clusters.some((c) => c.facts !== 'webhook');

/**
 * Whether a process of these roles uses the clusters, and so checks them at start-up: the worker
 * (analysis runs, Kargo freight), and an ingest that watches or answers Slack commands. An ingest
 * of webhooks alone never loads the Kubernetes client (src/kube/client-node.ts): bench:ingest,
 * idle heap 54 -> 28 MB.
 */
export function usesClusters(roles: ReadonlySet<Role>, config: { clusters: readonly ClusterConfig[] }, answersSlack: boolean): boolean {
  return roles.has('worker') || (roles.has('ingest') && (answersSlack || watchesClusters(config)));
}

/** How long start-up waits for an API server's /version: the clients' own timeout is longer. */
export const STARTUP_PROBE_MS = 5_000;

/** A cluster start-up cannot go on without; the message names each and the fix. */
export class ClusterStartupError extends StartupError {
  override readonly name = 'ClusterStartupError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

const OR_OPTIONAL = ', or mark the cluster optional: true to start without it';

/** Required clusters whose client cannot be built, each in one sentence with the fix (none: an empty list). */
export function unconfigurableClusters(clusters: readonly ClusterConfig[]): string[] {
  const problems: string[] = [];
  for (const cluster of clusters.filter((c) => !c.optional)) {
    try {
      kubeConfigFor(cluster);
    } catch (err) {
      problems.push(`cluster ${cluster.name}: ${configureProblem(cluster, err)}${OR_OPTIONAL}`);
    }
  }
  return problems;
}

function probeWithin(clients: ClusterClients, name: string, ms: number): Promise<ServerProbe> {
  return answerWithin(probeServer(clients.get(name).api), ms, (): ServerProbe => ({ kind: 'unreachable', detail: `no answer within ${ms / 1000} s` }));
}

/**
 * Throws a ClusterStartupError for a required cluster that cannot be configured or refuses our
 * credentials; logs everything else. `clients` is called only once every required cluster can be built.
 */
export async function checkClustersAtStartup(clusters: readonly ClusterConfig[], clients: () => ClusterClients, logger: Logger, probeMs = STARTUP_PROBE_MS): Promise<void> {
  const unconfigurable = unconfigurableClusters(clusters);
  if (unconfigurable.length > 0) throw new ClusterStartupError(unconfigurable);
  const built = clients();
  const unconfigured = new Set<string>();
  for (const { name, error } of built.unconfigured()) {
    unconfigured.add(name);
    const cluster = clusters.find((c) => c.name === name);
    // Info, not warn: the config says this cluster may be absent.
    logger.info({ cluster: name }, `cluster ${name} (optional) cannot be configured: ${cluster ? configureProblem(cluster, error) : error.message}; Glidepath starts without it and tries again at each use`);
  }
  const reachable = clusters.filter((c) => !unconfigured.has(c.name));
  const probes = await Promise.all(reachable.map(async (c) => ({ cluster: c, probe: await probeWithin(built, c.name, probeMs) })));
  const problems: string[] = [];
  for (const { cluster, probe } of probes) {
    const server = built.get(cluster.name).server;
    const said = probeSentence(server, probe);
    if (said.ok) logger.info({ cluster: cluster.name, server }, `cluster ${cluster.name}: ${said.text}`);
    else if (probe.kind === 'rejected' && !cluster.optional) problems.push(`cluster ${cluster.name}: ${said.text}${OR_OPTIONAL}`);
    else logger.warn({ cluster: cluster.name, server }, `cluster ${cluster.name}${cluster.optional ? ' (optional)' : ''}: ${said.text}; Glidepath starts, and its watch and the actions on ${cluster.name} fail until it answers`);
  }
  if (problems.length > 0) throw new ClusterStartupError(problems);
}
