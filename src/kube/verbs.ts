/**
 * Every Kubernetes permission Glidepath uses, declared once. The API wrapper (api.ts) refuses a
 * call that is not declared here, and test/kube/rbac.test.ts checks that deploy/rbac grants
 * exactly these: a new call cannot ship without its RBAC rule, and no rule outlives its call.
 */

export interface VerbDeclaration {
  apiGroup: string;
  /** `rollouts` or `rollouts/status`. */
  resource: string;
  verb: string;
  /** Why Glidepath needs it (kept in the ClusterRole as a comment). */
  why: string;
  /**
   * Used only for clusters whose `authorization` is `kubernetes` or `both` (acting as the person):
   * cluster-scoped, asked once by `glidepath check` for those clusters.
   */
  actingAsThePerson?: true;
}

export const VERBS: readonly VerbDeclaration[] = [
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'get', why: 're-read a Rollout before acting on it' },
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'patch', why: 'approve a step: spec.paused=false, as kubectl argo rollouts promote' },
  { apiGroup: 'argoproj.io', resource: 'rollouts/status', verb: 'patch', why: 'approve (clear pauseConditions), abort and retry' },
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'list', why: 'the watch source lists tracked Rollouts (the prune job too, under its own ClusterRole)' },
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'watch', why: 'the watch source follows tracked Rollouts (facts: watch or both)' },
  { apiGroup: 'argoproj.io', resource: 'analysisruns', verb: 'get', why: 'the failing metrics, values and conditions of a failed or inconclusive step analysis' },
  { apiGroup: 'argoproj.io', resource: 'applications', verb: 'get', why: 'a RollingSync child re-read after a conflict (only its status moved: the sync is sent again)' },
  { apiGroup: 'argoproj.io', resource: 'applications', verb: 'list', why: 'the children of an ApplicationSet' },
  { apiGroup: 'argoproj.io', resource: 'applications', verb: 'watch', why: 'wait for refreshed children (freshness)' },
  { apiGroup: 'argoproj.io', resource: 'applications', verb: 'patch', why: 'refresh annotation; operation.sync for a RollingSync step' },
  { apiGroup: 'argoproj.io', resource: 'applicationsets', verb: 'get', why: 'RollingSync steps and applicationStatus' },
  { apiGroup: 'argoproj.io', resource: 'applicationsets', verb: 'list', why: 'the watch source lists the ApplicationSets that stages name (step progress)' },
  { apiGroup: 'argoproj.io', resource: 'applicationsets', verb: 'watch', why: 'the watch source follows the ApplicationSets that stages name (facts: watch or both)' },
  { apiGroup: 'argoproj.io', resource: 'appprojects', verb: 'get', why: "the syncWindows of the AppProject of each Application Glidepath syncs or refreshes (the freeze gate)" },
  { apiGroup: 'kargo.akuity.io', resource: 'stages', verb: 'get', why: 'requested Freight and health of a Stage' },
  { apiGroup: 'kargo.akuity.io', resource: 'stages', verb: 'list', why: 'Stages chosen by label selector or name pattern; the watch source lists followed Stages' },
  { apiGroup: 'kargo.akuity.io', resource: 'stages', verb: 'watch', why: "the watch source follows the Stages of Kargo stages (facts: watch or both), and a target-aware Stage's PromotionRequest is followed in its status" },
  { apiGroup: 'kargo.akuity.io', resource: 'stages', verb: 'promote', why: "Kargo's webhook checks this custom verb on every Promotion" },
  { apiGroup: 'kargo.akuity.io', resource: 'freights', verb: 'get', why: 'check Freight availability before promoting' },
  { apiGroup: 'kargo.akuity.io', resource: 'freights', verb: 'list', why: 'Freight available to a Stage; the watch source lists the Freight of followed projects' },
  { apiGroup: 'kargo.akuity.io', resource: 'freights', verb: 'watch', why: 'the watch source follows Freight (alias, images, commits of a release)' },
  { apiGroup: 'kargo.akuity.io', resource: 'promotions', verb: 'create', why: 'promote Freight to a Stage' },
  { apiGroup: 'kargo.akuity.io', resource: 'promotions', verb: 'get', why: 'follow a Promotion' },
  { apiGroup: 'kargo.akuity.io', resource: 'promotions', verb: 'list', why: 'the watch source lists the Promotions of followed projects' },
  { apiGroup: 'kargo.akuity.io', resource: 'promotions', verb: 'watch', why: 'follow a Promotion until it ends' },
  { apiGroup: '', resource: 'users', verb: 'impersonate', why: "authorization: kubernetes or both: a person's write is sent as their Kubernetes user (Impersonate-User)", actingAsThePerson: true },
  { apiGroup: '', resource: 'groups', verb: 'impersonate', why: "authorization: kubernetes or both: and as their Kubernetes groups (Impersonate-Group)", actingAsThePerson: true },
  {
    apiGroup: 'authorization.k8s.io',
    resource: 'subjectaccessreviews',
    verb: 'create',
    why: 'authorization: kubernetes or both: ask whether the person may make the write before it is sent, so a refusal names the verb',
    actingAsThePerson: true,
  },
];

export const RBAC_FILE = 'deploy/rbac/glidepath-clusterrole.yaml';
export const PRUNE_RBAC_FILE = 'deploy/prune-notified/rbac/clusterrole.yaml';

/** What the prune job calls; its ClusterRole grants these and nothing else. */
export const PRUNE_VERBS: readonly Pick<VerbDeclaration, 'apiGroup' | 'resource' | 'verb'>[] = [
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'get' },
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'list' },
  { apiGroup: 'argoproj.io', resource: 'rollouts', verb: 'patch' },
];

export function isDeclared(apiGroup: string, resource: string, verb: string): boolean {
  return VERBS.some((v) => v.apiGroup === apiGroup && v.resource === resource && v.verb === verb);
}

/** `group resource verb` triples, sorted, for comparing with a ClusterRole. */
export function declaredTriples(role: 'glidepath' | 'prune-notified' = 'glidepath'): string[] {
  const verbs = role === 'glidepath' ? VERBS : PRUNE_VERBS;
  return verbs.map((v) => `${v.apiGroup} ${v.resource} ${v.verb}`).sort();
}
