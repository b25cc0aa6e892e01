/**
 * The Kubernetes reads the Slack commands make, by cluster name, over the configured
 * ClusterClients: freshness, Kargo Stages and Freight, following a Promotion. Nothing here writes:
 * every write is a request to the action engine (src/actions/), which sends it through the
 * guarded operations of this folder.
 */
import type { KargoStageSelection } from '../model/kargo-stage-selector.js';
import type { ClusterClients } from './clusters.js';
import { checkFreshness, waitFresh, type FreshnessSnapshot, type WaitFreshOptions } from './freshness-reader.js';
import { availableFreight, followPromotion, selectStages, stageHealth } from './kargo.js';
import { followPromotionRequest } from './kargo-requests.js';

export class KubeReads {
  constructor(private readonly clusters: ClusterClients) {}

  checkFreshness(cluster: string, namespace: string, appSet: string) {
    return checkFreshness(this.clusters.api(cluster), namespace, appSet);
  }

  waitFresh(cluster: string, namespace: string, snapshot: FreshnessSnapshot, options: WaitFreshOptions) {
    return waitFresh(this.clusters.api(cluster), namespace, snapshot, options);
  }

  selectStages(cluster: string, selection: KargoStageSelection) {
    return selectStages(this.clusters.api(cluster), selection);
  }

  availableFreight(cluster: string, project: string, stage: string) {
    return availableFreight(this.clusters.api(cluster), project, stage);
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
