/**
 * The failing metrics of a Rollout's step analysis, read from its AnalysisRun when a fact says the
 * run failed, errored or was inconclusive. The reducer worker calls it before reducing (the reducer
 * stays pure: the metrics arrive as part of the fact). A completed run never changes, so what was
 * read is kept (bounded); a read that fails leaves the fact as it was (the reply then quotes the
 * Rollout's own message) and is not retried for the same run until it falls out of the cache.
 */
import type { Logger } from 'pino';
import type { Fact } from '../facts/fact.js';
import { FAILING_ANALYSIS_PHASES, failingMetrics, type FailingMetric } from '../model/analysis-run.js';
import type { ClusterClients } from './clusters.js';
import { getAnalysisRun } from './reads.js';

const CACHE_SIZE = 500;

export class AnalysisRunReader {
  private readonly cache = new Map<string, FailingMetric[] | undefined>();

  constructor(
    private readonly clusters: () => ClusterClients,
    private readonly logger: Logger,
  ) {}

  /** The fact with `rollout.analysis.metrics` filled in when its analysis failed; else the fact itself. */
  async enrich(fact: Fact): Promise<Fact> {
    if (fact.kind !== 'rollout') return fact;
    const analysis = fact.rollout.analysis;
    if (!analysis || !analysis.name || analysis.metrics || !FAILING_ANALYSIS_PHASES.has(analysis.status)) return fact;
    const { cluster, namespace } = fact.target;
    const key = `${cluster}/${namespace}/${analysis.name}`;
    let metrics: FailingMetric[] | undefined;
    if (this.cache.has(key)) metrics = this.cache.get(key);
    else {
      metrics = await this.read(cluster, namespace, analysis.name);
      this.cache.set(key, metrics);
      if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    }
    return metrics && metrics.length > 0 ? { ...fact, rollout: { ...fact.rollout, analysis: { ...analysis, metrics } } } : fact;
  }

  private async read(cluster: string, namespace: string, name: string): Promise<FailingMetric[] | undefined> {
    try {
      return failingMetrics(await getAnalysisRun(this.clusters().api(cluster), namespace, name));
    } catch (err) {
      this.logger.warn({ cluster, namespace, analysisRun: name, err: (err as Error).message }, 'could not read the failed AnalysisRun; the reply quotes the Rollout only');
      return undefined;
    }
  }
}
