/**
 * Who may change a cluster from Slack. Per pipeline stage, in config: Slack users (U…/W…) and
 * user groups (S…) per action. Nothing configured means nobody: the answer then says which
 * setting to add. Reading (status, freshness without --refresh) is open to the channel and never
 * comes here.
 */
import type { ConfigFile } from '../config/file.js';

export type ClusterAction = 'approve' | 'abort' | 'promote' | 'refresh';

/** Slack user groups, looked up through the Slack edge (usergroups.users.list), cached there. */
export interface GroupDirectory {
  isMember(groupId: string, userId: string): Promise<boolean>;
}

export type Decision =
  | { allowed: true; via: string }
  | { allowed: false; reason: string };

export async function authorize(
  config: ConfigFile,
  where: { pipeline: string; stage: string },
  action: ClusterAction,
  userId: string,
  groups: GroupDirectory,
): Promise<Decision> {
  const p = config.pipelines.findIndex((x) => x.name === where.pipeline);
  const pipeline = config.pipelines[p];
  const s = pipeline ? pipeline.stages.findIndex((x) => x.name === where.stage) : -1;
  const stage = pipeline?.stages[s];
  if (!pipeline || !stage) return { allowed: false, reason: `no stage ${where.pipeline}@${where.stage} in the config` };
  const base = `pipelines[${p}].stages[${s}].permissions`;
  // A refresh without a list of its own is granted to whoever may approve (the refusal says so).
  const fallsBack = action === 'refresh' && stage.permissions?.refresh === undefined;
  const granting: ClusterAction = fallsBack ? 'approve' : action;
  const path = `${base}.${granting}`;
  const principals = stage.permissions?.[granting] ?? [];
  const why = fallsBack ? ` (${base}.refresh is not set, so whoever may approve may refresh)` : '';
  if (principals.length === 0) {
    return { allowed: false, reason: `nobody may ${action} in ${pipeline.name}@${stage.name} yet: add Slack user or group ids to ${fallsBack ? `${base}.refresh or ${path}` : path} in the Glidepath config` };
  }
  if (principals.includes(userId)) return { allowed: true, via: userId };
  for (const group of principals.filter((x) => x.startsWith('S'))) {
    if (await groups.isMember(group, userId)) return { allowed: true, via: group };
  }
  return {
    allowed: false,
    reason: `you may not ${action} in ${pipeline.name}@${stage.name}: ${path} allows ${principals.join(', ')}${why}; ask one of them, or an admin to add you`,
  };
}
