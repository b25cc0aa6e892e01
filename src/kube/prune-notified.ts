/**
 * The prune job for the notifications engine's memory. Argo's notifications engine records every
 * `oncePer` value it has sent as a key of the object's `notified.notifications.argoproj.io`
 * annotation and never removes them: about 100 bytes a key, one per heartbeat bucket, until the
 * object reaches Kubernetes' 256 KiB annotation limit and every write to it fails. Removing the
 * annotation is safe (the engine then resends the current state at once, which Glidepath reduces
 * as a heartbeat), so the job removes it from every Rollout some pipeline tracks.
 *
 * Two phases, so `--dry-run` is the first alone: plan (list the tracked Rollouts, read each value)
 * and apply (one JSON patch per Rollout that `test`s the value it read before removing it). A
 * Rollout whose annotation changed in between fails the test and is skipped and counted, never
 * overwritten: the engine's newest key is never lost.
 */
import type { ConfigFile } from '../config/file.js';
import type { ClusterClients } from './clusters.js';
import { KubeActionError } from './errors.js';
import { ROLLOUTS } from './resources.js';

export const NOTIFIED_ANNOTATION = 'notified.notifications.argoproj.io';
/** RFC 6901: `/` in a key is written `~1` (and `~` as `~0`). */
const ANNOTATION_PATH = `/metadata/annotations/${NOTIFIED_ANNOTATION.replace(/~/g, '~0').replace(/\//g, '~1')}`;

export interface PruneScope {
  cluster: string;
  namespace: string;
  /** Label selector, as the API server takes it. */
  selector: string;
}

export interface PruneCandidate {
  cluster: string;
  namespace: string;
  name: string;
  /** The annotation's value as read; the patch tests it. */
  value: string;
}

export interface PrunePlan {
  scanned: number;
  candidates: PruneCandidate[];
  /** Scopes whose list failed, with the reason. */
  failed: { scope: PruneScope; reason: string }[];
}

export interface PruneResult {
  scanned: number;
  pruned: number;
  /** Changed (or deleted) between read and write: left as it is. */
  skipped: number;
  failed: number;
  bytesFreed: number;
  dryRun: boolean;
}

/** Every (cluster, namespace, selector) a pipeline stage tracks Rollouts with, once each. */
export function pruneScopes(config: ConfigFile): PruneScope[] {
  const scopes = new Map<string, PruneScope>();
  for (const pipeline of config.pipelines) {
    for (const stage of pipeline.stages) {
      if (!stage.rollouts) continue;
      const scope = { cluster: stage.cluster, namespace: stage.rollouts.namespace, selector: stage.rollouts.selector.text };
      scopes.set(JSON.stringify(scope), scope);
    }
  }
  return [...scopes.values()];
}

interface ListedRollout {
  metadata?: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
}

export async function planPrune(clusters: ClusterClients, scopes: readonly PruneScope[]): Promise<PrunePlan> {
  const seen = new Set<string>();
  const plan: PrunePlan = { scanned: 0, candidates: [], failed: [] };
  for (const scope of scopes) {
    let items: unknown[];
    try {
      items = (await clusters.api(scope.cluster).list(ROLLOUTS, scope.namespace, { labelSelector: scope.selector })).items;
    } catch (err) {
      plan.failed.push({ scope, reason: err instanceof Error ? err.message : String(err) });
      continue;
    }
    for (const item of items as ListedRollout[]) {
      const name = item.metadata?.name;
      if (!name) continue;
      // Two stages may select the same Rollout: it is scanned and pruned once.
      const key = `${scope.cluster}/${scope.namespace}/${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      plan.scanned++;
      const value = item.metadata?.annotations?.[NOTIFIED_ANNOTATION];
      if (value !== undefined) plan.candidates.push({ cluster: scope.cluster, namespace: scope.namespace, name, value });
    }
  }
  return plan;
}

export async function applyPrune(clusters: ClusterClients, plan: PrunePlan, options: { dryRun?: boolean } = {}): Promise<PruneResult> {
  const result: PruneResult = { scanned: plan.scanned, pruned: 0, skipped: 0, failed: plan.failed.length, bytesFreed: 0, dryRun: options.dryRun ?? false };
  for (const c of plan.candidates) {
    const bytes = Buffer.byteLength(NOTIFIED_ANNOTATION) + Buffer.byteLength(c.value);
    if (result.dryRun) {
      result.pruned++;
      result.bytesFreed += bytes;
      continue;
    }
    try {
      await clusters.api(c.cluster).jsonPatch(ROLLOUTS, c.namespace, c.name, [
        { op: 'test', path: ANNOTATION_PATH, value: c.value },
        { op: 'remove', path: ANNOTATION_PATH },
      ]);
      result.pruned++;
      result.bytesFreed += bytes;
    } catch (err) {
      // 422: the test failed (the engine wrote a newer value); 404: the Rollout is gone.
      const status = err instanceof KubeActionError ? err.status : undefined;
      if (status === 422 || status === 404 || status === 409) result.skipped++;
      else result.failed++;
    }
  }
  return result;
}

export function pruneSummary(r: PruneResult): string {
  const verb = r.dryRun ? 'would prune' : 'pruned';
  return `prune-notified: scanned ${r.scanned} Rollouts, ${verb} ${r.pruned}, skipped ${r.skipped} (changed since read), failed ${r.failed}, ${r.dryRun ? 'would free' : 'freed'} ${r.bytesFreed} bytes`;
}
