/**
 * `node dist/src/main.js prune-notified [--dry-run]`: removes the notifications engine's
 * `notified.notifications.argoproj.io` annotation from every Rollout the config tracks (see
 * src/kube/prune-notified.ts), prints one summary line, and exits 0 (1 when a list or a write
 * failed, so the CronJob's history shows it). Run by deploy/prune-notified/ on a schedule.
 */
import { parseEnv } from '../config/env.js';
import { ConfigError } from '../config/errors.js';
import { configFromEnv } from '../config/file.js';
import { ClusterClients } from '../kube/clusters.js';
import { applyPrune, planPrune, pruneScopes, pruneSummary, type PruneResult } from '../kube/prune-notified.js';

export const PRUNE_USAGE = 'usage: glidepath prune-notified [--dry-run]   (GLIDEPATH_CONFIG names the config whose Rollouts are pruned)';

export async function runPruneNotified(args: readonly string[], source: NodeJS.ProcessEnv = process.env): Promise<PruneResult> {
  const unknown = args.filter((a) => a !== '--dry-run');
  if (unknown.length > 0) throw new ConfigError('arguments', [`unknown argument ${JSON.stringify(unknown[0])}; ${PRUNE_USAGE}`]);
  const config = configFromEnv(parseEnv(source));
  const clusters = new ClusterClients(config.clusters);
  const plan = await planPrune(clusters, pruneScopes(config));
  for (const f of plan.failed) console.error(`prune-notified: cannot list Rollouts in ${f.scope.cluster}/${f.scope.namespace} (${f.scope.selector}): ${f.reason}`);
  return applyPrune(clusters, plan, { dryRun: args.includes('--dry-run') });
}

export function printPruneResult(result: PruneResult): number {
  // The one line a CronJob's log needs; stdout, so it is not mistaken for an error.
  process.stdout.write(`${pruneSummary(result)}\n`);
  return result.failed > 0 ? 1 : 0;
}
