import type { PipelineConfig } from '../../config/file.js';
import { dropUnnamedAppSets } from './reduce-appset.js';
import { FINISHED_RELEASE_STATUSES, type ReleaseRecord, type StageState } from '../record/record.js';

export function emptyStage(name: string, cluster: string): StageState {
  return { name, cluster, status: 'Waiting', targets: {}, pending: [] };
}

export function newRecord(
  pipeline: PipelineConfig,
  releaseId: string,
  idSource: ReleaseRecord['idSource'],
  images: string[],
  now: number,
): ReleaseRecord {
  return {
    schema: 1,
    version: 0,
    pipeline: pipeline.name,
    releaseId,
    idSource,
    images: [...images].sort(),
    createdAt: now,
    updatedAt: now,
    lastHeardAt: now,
    status: 'Announced',
    stages: pipeline.stages.map((s) => emptyStage(s.name, s.cluster)),
    notices: [],
    events: [],
    counters: { facts: 0, duplicate: 0 },
    outbox: [],
  };
}

/**
 * Stages of a release in flight follow the config: new stages appear as Waiting, removed ones disappear, and what a
 * stage kept of an ApplicationSet its config no longer names goes (its step row; the
 * ApplicationSet's membership when no stage names it any more).
 */
export function alignStages(record: ReleaseRecord, pipeline: PipelineConfig): void {
  // A release that ended keeps the stages it ended with: a stage added since is no part of it.
  if (FINISHED_RELEASE_STATUSES.includes(record.status)) return;
  const byName = new Map(record.stages.map((s) => [s.name, s]));
  record.stages = pipeline.stages.map((s) => byName.get(s.name) ?? emptyStage(s.name, s.cluster));
  dropUnnamedAppSets(record, pipeline);
}
