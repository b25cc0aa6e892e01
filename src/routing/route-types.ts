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

export interface RoutedFact {
  fact: Fact;
  route: ResolvedRoute;
}
