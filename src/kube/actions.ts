/**
 * The Kubernetes layer as the Slack commands see it: every read and action by cluster name, over
 * the configured ClusterClients. Each method is one of the guarded operations in this folder.
 */
import type { KargoStageSelection } from '../model/kargo-stage-selector.js';
import type { ClusterClients } from './clusters.js';
import { checkFreshness, refreshAndWait, waitFresh, type FreshnessSnapshot, type WaitFreshOptions } from './freshness-reader.js';
import { availableFreight, followPromotion, promote, selectStages, stageHealth } from './kargo.js';
import { followPromotionRequest } from './kargo-requests.js';
import { syncRollingSyncStep, type RollingSyncOptions } from './rolling-sync.js';
import type { RefreshRounds } from './refresh-rounds.js';
import { abortRollout, approveCanaryStep, retryRollout, type ExpectedCanaryStep } from './rollout-operations.js';

export class KubeActions {
  constructor(private readonly clusters: ClusterClients) {}

  approveCanaryStep(cluster: string, namespace: string, name: string, expected: ExpectedCanaryStep) {
    return approveCanaryStep(this.clusters.api(cluster), namespace, name, expected);
  }

  abortRollout(cluster: string, namespace: string, name: string, expected?: { podHash: string }) {
    return abortRollout(this.clusters.api(cluster), namespace, name, expected);
  }

  retryRollout(cluster: string, namespace: string, name: string, expected?: { podHash: string }) {
    return retryRollout(this.clusters.api(cluster), namespace, name, expected);
  }

  checkFreshness(cluster: string, namespace: string, appSet: string) {
    return checkFreshness(this.clusters.api(cluster), namespace, appSet);
  }

  /** `freshness --refresh`: refresh the stale children of `snapshot` and wait for them on a watch. */
  refreshAndWait(cluster: string, namespace: string, snapshot: FreshnessSnapshot, options: Omit<WaitFreshOptions, 'refreshAgain'> & { rounds?: RefreshRounds }) {
    return refreshAndWait(this.clusters.api(cluster), namespace, snapshot, options);
  }

  waitFresh(cluster: string, namespace: string, snapshot: FreshnessSnapshot, options: WaitFreshOptions) {
    return waitFresh(this.clusters.api(cluster), namespace, snapshot, options);
  }

  syncRollingSyncStep(cluster: string, namespace: string, appSet: string, step: number, expectedRevision: string, options?: RollingSyncOptions) {
    return syncRollingSyncStep(this.clusters.api(cluster), namespace, appSet, step, expectedRevision, options);
  }

  selectStages(cluster: string, selection: KargoStageSelection) {
    return selectStages(this.clusters.api(cluster), selection);
  }

  availableFreight(cluster: string, project: string, stage: string) {
    return availableFreight(this.clusters.api(cluster), project, stage);
  }

  promote(cluster: string, project: string, stage: string, freight: string) {
    const client = this.clusters.get(cluster);
    return promote(client.api, project, stage, freight, client.kargoApi ? { kargoApi: client.kargoApi } : {});
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
