/** Which release in flight an object belongs to, so an action can be told in that release's thread. */
import type { ReleaseRecord, TargetState } from '../src/releases/record/record.js';
import type { CommandContext } from './types.js';

export async function releaseWithTarget(ctx: Pick<CommandContext, 'releases'>, pipeline: string, key: string): Promise<{ record: ReleaseRecord; target: TargetState } | undefined> {
  for (const record of await ctx.releases.list(pipeline, { limit: 20 })) {
    for (const stage of record.stages) {
      const target = stage.targets[key];
      if (target && !target.supersededBy) return { record, target };
    }
  }
  return undefined;
}

/** The newest release in flight that has reached `stage`, else the newest in flight at all. */
export async function releaseAtStage(ctx: Pick<CommandContext, 'releases'>, pipeline: string, stage: string): Promise<ReleaseRecord | undefined> {
  const records = await ctx.releases.list(pipeline, { limit: 20 });
  return records.find((r) => r.stages.some((s) => s.name === stage && Object.keys(s.targets).length > 0)) ?? records[0];
}
