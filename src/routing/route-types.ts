/** What routing hands the reducer: a fact's routes (a pipeline, maybe a stage, a release id). Types only, so every router can name them without importing another. */
import type { PipelineConfig, StageConfig } from '../config/file.js';
import type { Fact } from '../facts/fact.js';
import type { ReleaseRecord } from '../releases/record/record.js';

/** A stage (or, for release-level facts, just the pipeline) a fact belongs to, under one release id. */
export interface ResolvedRoute {
  pipeline: PipelineConfig;
  stage?: StageConfig;
  releaseId: string;
  idSource?: ReleaseRecord['idSource'];
}

/** A stage a cluster fact belongs to, under the release id routing found for it. */
export interface Route {
  pipeline: PipelineConfig;
  stage: StageConfig;
  releaseId: string;
  idSource: RouteIdSource;
}

/**
 * How a route's release id was found: the release id annotation, the images, a Kargo Freight's
 * name, a CI announcement of the same images; `in-flight`: the fact names no release (a Kargo
 * Stage without Freight) and goes to the pipeline's release in flight.
 */
export type RouteIdSource = ReleaseRecord['idSource'] | 'in-flight';

export interface RoutedFact {
  fact: Fact;
  route: ResolvedRoute;
}
