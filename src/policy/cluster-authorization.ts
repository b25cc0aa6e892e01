/**
 * The cluster's own word on a person's write (`authorization: kubernetes | both`): who they are
 * in Kubernetes (the identity map), then one SubjectAccessReview per permission the write needs,
 * asked before anything is sent. The answer is a value naming what is missing.
 */
import type { ConfigFile } from '../config/file.js';
import { describeAccess, type AccessAttributes, type KubeIdentity } from '../kube/impersonation.js';
import type { IdentityMap } from './identity.js';

export type Authorization = ConfigFile['clusters'][number]['authorization'];

/** The cluster's switch; a cluster the config does not name acts as today. */
export function authorizationOf(config: { clusters: readonly Pick<ConfigFile['clusters'][number], 'name' | 'authorization'>[] }, cluster: string): Authorization {
  return config.clusters.find((c) => c.name === cluster)?.authorization ?? 'config';
}

export interface AccessReviewer {
  reviewAccess(cluster: string, identity: KubeIdentity, access: AccessAttributes): Promise<{ allowed: boolean }>;
}

export type ClusterDecision =
  | { allowed: true; identity: KubeIdentity; via: 'table' | 'email' }
  | { allowed: false; reason: string; identity?: KubeIdentity };

export async function clusterAllows(reviewer: AccessReviewer, identities: IdentityMap, cluster: string, slackUserId: string, writes: readonly AccessAttributes[]): Promise<ClusterDecision> {
  const mapped = await identities.resolve(slackUserId);
  if (mapped.kind === 'unmapped') return { allowed: false, reason: `${mapped.reason} (cluster ${cluster} lets its own RBAC decide)` };
  const { identity } = mapped;
  const answers = await Promise.all(writes.map(async (access) => ((await reviewer.reviewAccess(cluster, identity, access)).allowed ? undefined : access)));
  const missing = answers.filter((a): a is AccessAttributes => a !== undefined);
  if (missing.length > 0) {
    const groups = identity.groups.length > 0 ? ` (groups ${identity.groups.join(', ')})` : '';
    return {
      allowed: false,
      identity,
      reason: `${identity.user}${groups} may not ${missing.map((m) => describeAccess(m, cluster)).join(', nor ')}: the cluster's RBAC decides here, so ask its admins for a Role granting it; nothing was sent`,
    };
  }
  return { allowed: true, identity, via: mapped.via };
}
