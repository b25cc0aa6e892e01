/**
 * A release record as Redis hash fields: one field for the release and its stage rows, one per
 * target. A fact usually changes one target, so a save sends that target and the small head
 * instead of the whole record (a stage of a hundred Rollouts is tens of kilobytes).
 */
import type { ReleaseRecord, StageState, TargetState } from './record.js';

export const HEAD_FIELD = 'head';
/** Notices and events grow slowly and change rarely: fields of their own keep the head small. */
const NOTICES_FIELD = 'notices';
const EVENTS_FIELD = 'events';
const TARGET_PREFIX = 't\u0000';

interface HeadStage extends Omit<StageState, 'targets'> {
  /** Target keys in their order, so a record reads back exactly as it was saved. */
  targetKeys: string[];
}

type Head = Omit<ReleaseRecord, 'stages' | 'version' | 'notices' | 'events'> & { stages: HeadStage[] };

function targetField(stage: string, key: string): string {
  return `${TARGET_PREFIX}${stage}\u0000${key}`;
}

export function encodeRecord(record: ReleaseRecord): Map<string, string> {
  const fields = new Map<string, string>();
  const { version: _version, stages, notices, events, ...rest } = record;
  const head: Head = {
    ...rest,
    stages: stages.map(({ targets, ...stage }) => ({ ...stage, targetKeys: Object.keys(targets) })),
  };
  fields.set(HEAD_FIELD, JSON.stringify(head));
  fields.set(NOTICES_FIELD, JSON.stringify(notices));
  fields.set(EVENTS_FIELD, JSON.stringify(events));
  for (const stage of stages) {
    for (const [key, target] of Object.entries(stage.targets)) fields.set(targetField(stage.name, key), JSON.stringify(target));
  }
  return fields;
}

export function decodeRecord(fields: ReadonlyMap<string, string>, version: number): ReleaseRecord | undefined {
  const headJson = fields.get(HEAD_FIELD);
  if (headJson === undefined) return undefined;
  const head = JSON.parse(headJson) as Head;
  const stages: StageState[] = head.stages.map(({ targetKeys, ...stage }) => {
    const targets: Record<string, TargetState> = {};
    for (const key of targetKeys) {
      const json = fields.get(targetField(stage.name, key));
      if (json !== undefined) targets[key] = JSON.parse(json) as TargetState;
    }
    return { ...stage, targets };
  });
  const notices = JSON.parse(fields.get(NOTICES_FIELD) ?? '[]') as string[];
  const events = JSON.parse(fields.get(EVENTS_FIELD) ?? '[]') as ReleaseRecord['events'];
  return { ...head, stages, notices, events, version };
}

/** Fields to write and fields to delete to turn `before` into `after`. */
export function diffFields(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): { set: [string, string][]; del: string[] } {
  const set: [string, string][] = [];
  for (const [field, value] of after) if (before.get(field) !== value) set.push([field, value]);
  const del = [...before.keys()].filter((f) => !after.has(f));
  return { set, del };
}
