/**
 * The Freight a Promote button is shown for. When a stage becomes healthy and the next stage is a
 * Kargo Stage, the button carries what proved healthy: the Freight the upstream Kargo Stage runs
 * now (`status.freightHistory[0]`). Read by the reducer worker as it hands the reply to Slack, so
 * the reducer stays pure; a read that fails leaves the button without Freight (the click then
 * promotes what proved healthy at that moment, as before).
 */
import type { Logger } from 'pino';
import type { ConfigFile } from '../../config/file.js';
import type { ClusterClients } from '../../kube/clusters.js';
import { upstreamKargoStage } from '../../kube/promote-freight.js';
import { getStage } from '../../kube/reads.js';
import { heldFreightName } from '../../model/kargo-stage-reading.js';
import type { ThreadEffect } from '../store/ports.js';
import type { ReleaseRecord } from '../record/record.js';

export class PromoteFreightResolver {
  constructor(
    private readonly config: ConfigFile,
    private readonly clusters: () => ClusterClients,
    private readonly logger: Logger,
  ) {}

  async enrich(record: ReleaseRecord, effects: ThreadEffect[]): Promise<ThreadEffect[]> {
    return Promise.all(effects.map((e) => this.one(record, e)));
  }

  private async one(record: ReleaseRecord, effect: ThreadEffect): Promise<ThreadEffect> {
    if (effect.type !== 'thread.reply' || effect.kind !== 'stage-healthy' || !effect.detail.promoteTo || effect.detail.freight) return effect;
    const stages = this.config.pipelines.find((p) => p.name === record.pipeline)?.stages ?? [];
    const upstream = upstreamKargoStage(stages.find((s) => s.name === effect.stage), stages.find((s) => s.name === effect.detail.promoteTo));
    if (!upstream) return effect;
    try {
      const freight = heldFreightName(await getStage(this.clusters().api(upstream.cluster), upstream.project, upstream.stage));
      return freight ? { ...effect, detail: { ...effect.detail, freight } } : effect;
    } catch (err) {
      this.logger.warn({ ...upstream, err: (err as Error).message }, 'could not read the Freight of the healthy Kargo Stage; the Promote button carries none');
      return effect;
    }
  }
}
