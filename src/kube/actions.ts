/**
 * The Kubernetes layer as the Slack commands see it: every read and action by cluster name, over
 * the configured ClusterClients. Each method is one of the guarded operations in this folder.
 * A write given `as` is sent as that Kubernetes identity (impersonation); without it, as Glidepath.
 */
import type { KargoStageSelection } from '../model/kargo-stage-selector.js';
import type { ClusterClients } from './clusters.js';
import { checkFreshness, refreshAndWait, waitFresh, type FreshnessSnapshot, type WaitFreshOptions } from './freshness-reader.js';
import { availableFreight, followPromotion, promote, selectStages, stageHealth } from './kargo.js';
import { followPromotionRequest } from './kargo-requests.js';
import { syncRollingSyncStep, type RollingSyncOptions } from './rolling-sync.js';
import type { RefreshRounds } from './refresh-rounds.js';
import type { KubeIdentity } from './impersonation.js';
import type { KubeApi } from './api.js';
import { abortRollout, approveCanaryStep, retryRollout, type ExpectedCanaryStep } from './rollout-operations.js';

export class KubeActions {
  constructor(private readonly clusters: ClusterClients) {}

  /** The cluster's API, its writes sent as `as` when given. */
  private writer(cluster: string, as: KubeIdentity | undefined): KubeApi {
    const api = this.clusters.api(cluster);
    return as ? api.as(as) : api;
  }

  approveCanaryStep(cluster: string, namespace: string, name: string, expected: ExpectedCanaryStep, as?: KubeIdentity) {
    return approveCanaryStep(this.writer(cluster, as), namespace, name, expected);
  }

  abortRollout(cluster: string, namespace: string, name: string, expected?: { podHash: string }, as?: KubeIdentity) {
    return abortRollout(this.writer(cluster, as), namespace, name, expected);
  }

  retryRollout(cluster: string, namespace: string, name: string, expected?: { podHash: string }, as?: KubeIdentity) {
    return retryRollout(this.writer(cluster, as), namespace, name, expected);
  }

  checkFreshness(cluster: string, namespace: string, appSet: string) {
    return checkFreshness(this.clusters.api(cluster), namespace, appSet);
  }

  /** `freshness --refresh`: refresh the stale children of `snapshot` and wait for them on a watch. */
  refreshAndWait(cluster: string, namespace: string, snapshot: FreshnessSnapshot, options: Omit<WaitFreshOptions, 'refreshAgain'> & { rounds?: RefreshRounds }, as?: KubeIdentity) {
    return refreshAndWait(this.writer(cluster, as), namespace, snapshot, options);
  }

  waitFresh(cluster: string, namespace: string, snapshot: FreshnessSnapshot, options: WaitFreshOptions) {
    return waitFresh(this.clusters.api(cluster), namespace, snapshot, options);
  }

  syncRollingSyncStep(cluster: string, namespace: string, appSet: string, step: number, expectedRevision: string, options?: RollingSyncOptions, as?: KubeIdentity) {
    return syncRollingSyncStep(this.writer(cluster, as), namespace, appSet, step, expectedRevision, options);
  }

  selectStages(cluster: string, selection: KargoStageSelection) {
    return selectStages(this.clusters.api(cluster), selection);
  }

  availableFreight(cluster: string, project: string, stage: string) {
    return availableFreight(this.clusters.api(cluster), project, stage);
  }

  /** Through Kargo's API (target-aware Stages) the promote is Kargo's token's, whatever `as` says (docs/actions.md). */
  promote(cluster: string, project: string, stage: string, freight: string, as?: KubeIdentity) {
    const client = this.clusters.get(cluster);
    return promote(this.writer(cluster, as), project, stage, freight, client.kargoApi ? { kargoApi: client.kargoApi } : {});
  }

  /** May `identity` do `access` on this cluster? A SubjectAccessReview, asked as Glidepath. */
  reviewAccess(cluster: string, identity: KubeIdentity, access: Parameters<KubeApi['reviewAccess']>[1]) {
    return this.clusters.api(cluster).reviewAccess(identity, access);
  }

  followPromotion(cluster: string, project: string, name: string, options: Parameters<typeof followPromotion>[3]) {
    return followPromotion(this.clusters.api(cluster), project, name, options);
  }

  /** A target-aware Stage's PromotionRequest, followed in the Stage's status. */
  followPromotionRequest(cluster: string, project: string, stage: string, name: string, options: Parameters<typeof followPromotionRequest>[4]) {
    return followPromotionRequest(this.clusters.api(cluster), project, stage, name, options);
  }

  stageHealth(cluster: string, project: string, stage: string, options?: Parameters<typeof stageHealth>[3]) {
    return stageHealth(this.clusters.api(cluster), project, stage, options);
  }
}
