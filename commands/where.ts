/**
 * From what a person typed to the configured stage it belongs to: permissions are per pipeline
 * stage, so every cluster-changing target must map to one. An object no stage selects is refused
 * (nobody can have been given the right to change it).
 */
import type { ConfigFile } from '../src/config/file.js';
import type { ClusterClients } from '../src/kube/clusters.js';
import { getRollout } from '../src/kube/reads.js';
import type { Rollout } from '../src/model/rollout.js';
import { stageSelectsRollout } from '../src/routing/route.js';
import { UsageError, type Target } from './parse.js';

export type { StageRef } from '../src/actions/types.js';
import type { StageRef } from '../src/actions/types.js';

export function stageByName(config: ConfigFile, pipeline: string, stage: string, subcommand: string): StageRef {
  const p = config.pipelines.find((x) => x.name === pipeline);
  if (!p) throw new UsageError(`there is no pipeline "${pipeline}" (pipelines: ${config.pipelines.map((x) => x.name).join(', ') || 'none'})`, subcommand);
  const s = p.stages.find((x) => x.name === stage);
  if (!s) throw new UsageError(`pipeline ${pipeline} has no stage "${stage}" (stages: ${p.stages.map((x) => x.name).join(', ')})`, subcommand);
  return { pipeline: p, stage: s };
}

/** The stages that select `cluster/namespace/name` as a Rollout or as an ApplicationSet. */
export function stagesOfObject(config: ConfigFile, target: Extract<Target, { kind: 'object' }>, kind: 'Rollout' | 'ApplicationSet'): StageRef[] {
  const out: StageRef[] = [];
  for (const pipeline of config.pipelines) {
    for (const stage of pipeline.stages) {
      if (stage.cluster !== target.cluster) continue;
      if (kind === 'Rollout' && stage.rollouts?.namespace === target.namespace) out.push({ pipeline, stage });
      if (kind === 'ApplicationSet' && stage.applicationSet?.namespace === target.namespace && stage.applicationSet.name === target.name) out.push({ pipeline, stage });
    }
  }
  return out;
}

/**
 * The stage a Rollout belongs to, by its live labels: stages often share a namespace (staging
 * and prod in `shop`), and the permissions of the wrong one must never apply. The Rollout read
 * for that comes back too, so the command need not read it again.
 */
export async function stageOfRollout(
  ctx: { config: ConfigFile; clusters: ClusterClients },
  target: Extract<Target, { kind: 'object' }>,
): Promise<{ where?: StageRef; live?: Rollout }> {
  if (stagesOfObject(ctx.config, target, 'Rollout').length === 0) return {};
  const live = await getRollout(ctx.clusters.api(target.cluster), target.namespace, target.name);
  const labels = live.metadata.labels ?? {};
  for (const pipeline of ctx.config.pipelines) {
    const stage = pipeline.stages.find((s) => stageSelectsRollout(s, target.cluster, target.namespace, labels));
    if (stage) return { where: { pipeline, stage }, live };
  }
  return { live };
}

export function label(ref: StageRef): string {
  return `${ref.pipeline.name}@${ref.stage.name}`;
}
