/**
 * A release record as Redis hash fields: one field for the release and its stage rows, one per
 * target, one per stage for its target keys in order and one for its pending targets. A fact usually changes one target, so a save
 * sends that target and the small head instead of the whole record (a stage of a hundred
 * Rollouts is tens of kilobytes; a stage's pending list can name thousands of targets).
 */
import type { AppSetState } from '../record/appset-record.js';
import type { ReleaseRecord, StageState, TargetState } from '../record/record.js';
import { decodeMembers, encodeMembers } from './appset-membership-codec.js';
import { targetKeys } from '../record/target-writes.js';
import { decodeChunks, encodeChunksAfter, type Chunked } from './record-chunks.js';

export const HEAD_FIELD = 'head';
/** Notices and events grow slowly and change rarely: fields of their own keep the head small. */
const NOTICES_FIELD = 'notices';
const EVENTS_FIELD = 'events';
/**
 * ApplicationSet step membership: one entry per child (thousands), replaced only when an
 * ApplicationSet fact changes it. The field holds each ApplicationSet without its members (records
 * saved before held them here too); the members are in chunks (record-chunks.ts) under
 * MEMBERS_PREFIX and the ApplicationSet's key, so a status write that moves 50 children sends
 * the chunks that hold them.
 */
const APPSETS_FIELD = 'appsets';
const MEMBERS_PREFIX = 'm\u0000';
type AppSets = NonNullable<ReleaseRecord['appSets']>;
const appSetsFields = new WeakMap<AppSets, [string, string][]>();
const TARGET_PREFIX = 't\u0000';
const PENDING_PREFIX = 'p\u0000';
/** A stage's target keys in their order, in chunks (records saved before these fields carry them in the head). */
const KEYS_PREFIX = 'k\u0000';
/**
 * A stage's timeline and its other releases (both bounded, both filled as the stage grows to a few
 * dozen targets, and both unchanged by most facts): a field of their own per stage, so the head,
 * written on every save, stays the same size whatever the size of the fleet (bench/curve.ts).
 * Records saved before carry them in the head.
 */
const SHOWN_PREFIX = 'x\u0000';
const shownField = (stage: string): string => `${SHOWN_PREFIX}${stage}`;
/** Records saved before the other releases had a field of their own carry them beside the timeline. */
type Shown = Pick<StageState, 'timeline' | 'otherReleases'>;
/**
 * A stage's other releases apart from its timeline: the timeline changes with most facts of a
 * canary (a step begins), the other releases (tens of target names) seldom, and in one field
 * every step sent them again (bench/curve.ts: bytes per fact grew with the fleet).
 */
const OTHERS_PREFIX = 'o\u0000';
const othersField = (stage: string): string => `${OTHERS_PREFIX}${stage}`;
/** Encodings of other releases, by object: the reducer replaces them when they change (mixed-stage.ts). */
const othersJson = new WeakMap<NonNullable<StageState['otherReleases']>, string>();

function encodeOthers(others: StageState['otherReleases']): string {
  if (others === undefined) return 'null';
  let json = othersJson.get(others);
  if (json === undefined) {
    json = JSON.stringify(others);
    othersJson.set(others, json);
  }
  return json;
}

/**
 * Encodings of pending lists, by list: the reducer replaces a stage's pending array when it
 * changes and keeps it otherwise (never changes one in place), so an unchanged list is neither
 * encoded again nor sent again.
 */
const pendingJson = new WeakMap<readonly string[], string>();

export function encodePending(pending: readonly string[]): string {
  let json = pendingJson.get(pending);
  if (json === undefined) {
    json = JSON.stringify(pending);
    pendingJson.set(pending, json);
  }
  return json;
}

interface HeadStage extends Omit<StageState, 'targets' | 'pending'> {
  /** Records saved before the key order had a field of its own carry it here. */
  targetKeys?: string[];
  /** Records saved before pending had a field of its own carry it here. */
  pending?: string[];
}

type Head = Omit<ReleaseRecord, 'stages' | 'version' | 'notices' | 'events' | 'appSets'> & { stages: HeadStage[] };

export function targetField(stage: string, key: string): string {
  return `${TARGET_PREFIX}${stage}\u0000${key}`;
}

/**
 * Encodings of targets, by target: the reducer replaces a target it changes (target-edit.ts) and
 * never changes one in place, so an unchanged target is neither encoded again nor sent again. An
 * encoded target is frozen, so a change in place would throw instead of going unsaved.
 */
const targetJson = new WeakMap<TargetState, string>();

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}

export function encodeTarget(target: TargetState): string {
  let json = targetJson.get(target);
  if (json === undefined) {
    json = JSON.stringify(target);
    deepFreeze(target);
    targetJson.set(target, json);
  }
  return json;
}

/**
 * Each stage's target keys in their order (so a record reads back exactly as it was saved), as
 * last encoded by stage's targets object: thousands of keys for a step stage of an
 * ApplicationSet, encoded again only from the chunk where the keys changed (a key appended
 * encodes the last chunk) and sent again only when they change.
 */
const keysJson = new WeakMap<Record<string, TargetState>, Chunked<string>>();

/** `keys`: Object.keys(targets), when the caller has listed them already. */
export function encodeKeys(targets: Record<string, TargetState>, keys: readonly string[] = targetKeys(targets)): string[] {
  const known = keysJson.get(targets);
  const next = encodeChunksAfter(keys, (k) => k, known);
  if (next !== known) keysJson.set(targets, next);
  return next.jsons;
}

/** `previous`: the ApplicationSets these replace, when known (members' encodings are reused where they did not change). */
export function encodeAppSets(appSets: AppSets, previous?: AppSets): [string, string][] {
  let fields = appSetsFields.get(appSets);
  if (fields !== undefined) return fields;
  const heads: Record<string, Omit<AppSetState, 'members'>> = {};
  fields = [];
  for (const [key, { members, ...state }] of Object.entries(appSets)) {
    heads[key] = state;
    encodeMembers(members, previous?.[key]?.members).forEach((json, i) => fields?.push([`${MEMBERS_PREFIX}${key}\u0000${i}`, json]));
  }
  fields.push([APPSETS_FIELD, JSON.stringify(heads)]);
  appSetsFields.set(appSets, fields);
  return fields;
}

function decodeAppSets(fields: ReadonlyMap<string, string>, json: string): AppSets {
  const appSets = JSON.parse(json) as Record<string, Omit<AppSetState, 'members'> & { members?: AppSetState['members'] }>;
  // The fields this came from, as encodeAppSets would write them (an old layout is written anew on the next save).
  let encoded: [string, string][] | undefined = [];
  for (const [key, state] of Object.entries(appSets)) {
    if (state.members !== undefined) {
      encoded = undefined;
      continue;
    }
    const prefix = `${MEMBERS_PREFIX}${key}\u0000`;
    const decoded = decodeMembers(fields, prefix);
    state.members = decoded?.members ?? {};
    decoded?.chunks.forEach((chunk, i) => encoded?.push([`${prefix}${i}`, chunk]));
  }
  const decoded = appSets as AppSets;
  if (encoded) appSetsFields.set(decoded, [...encoded, [APPSETS_FIELD, json]]);
  return decoded;
}

export const pendingField = (stage: string): string => `${PENDING_PREFIX}${stage}`;
export const keysField = (stage: string, chunk: number): string => `${KEYS_PREFIX}${stage}\u0000${chunk}`;
/** Fields of the ApplicationSets: `appsets` and their members' chunks. */
export const isAppSetsField = (field: string): boolean => field === APPSETS_FIELD || field.startsWith(MEMBERS_PREFIX);
/** Fields of a stage: its targets, key order and pending list. */
export const isStageField = (field: string, stage: string): boolean =>
  field === pendingField(stage) || field === shownField(stage) || field === othersField(stage) || field.startsWith(`${KEYS_PREFIX}${stage}\u0000`) || field.startsWith(`${TARGET_PREFIX}${stage}\u0000`);

/** The head, notices and events fields, and each stage's timeline and other releases: the small parts of a record, encoded on every save. */
export function encodeHead(record: ReleaseRecord): [string, string][] {
  const { version: _version, stages, notices, events, appSets: _appSets, ...rest } = record;
  const head: Head = {
    ...rest,
    stages: stages.map(({ targets: _targets, pending: _pending, timeline: _timeline, otherReleases: _others, ...stage }) => stage),
  };
  return [
    [HEAD_FIELD, JSON.stringify(head)],
    [NOTICES_FIELD, JSON.stringify(notices)],
    [EVENTS_FIELD, JSON.stringify(events)],
    ...stages.flatMap(({ name, timeline, otherReleases }): [string, string][] => [
      [shownField(name), JSON.stringify({ timeline } satisfies Shown)],
      [othersField(name), encodeOthers(otherReleases)],
    ]),
  ];
}

export function encodeRecord(record: ReleaseRecord): Map<string, string> {
  const fields = new Map<string, string>(encodeHead(record));
  if (record.appSets) for (const [field, json] of encodeAppSets(record.appSets)) fields.set(field, json);
  for (const stage of record.stages) {
    fields.set(pendingField(stage.name), encodePending(stage.pending));
    encodeKeys(stage.targets).forEach((json, i) => fields.set(keysField(stage.name, i), json));
    for (const [key, target] of Object.entries(stage.targets)) fields.set(targetField(stage.name, key), encodeTarget(target));
  }
  return fields;
}

export function decodeRecord(fields: ReadonlyMap<string, string>, version: number): ReleaseRecord | undefined {
  const headJson = fields.get(HEAD_FIELD);
  if (headJson === undefined) return undefined;
  const head = JSON.parse(headJson) as Head;
  const stages: StageState[] = head.stages.map(({ targetKeys: keysInHead, pending: inHead, ...stage }) => {
    const targets: Record<string, TargetState> = {};
    const chunks = decodeChunks<string>(fields, `${KEYS_PREFIX}${stage.name}\u0000`);
    const keys = chunks?.items ?? keysInHead ?? [];
    for (const key of keys) {
      const json = fields.get(targetField(stage.name, key));
      if (json === undefined) continue;
      const target = JSON.parse(json) as TargetState;
      deepFreeze(target);
      targetJson.set(target, json);
      targets[key] = target;
    }
    if (chunks !== undefined && Object.keys(targets).length === keys.length) keysJson.set(targets, chunks);
    const pendingField = fields.get(`${PENDING_PREFIX}${stage.name}`);
    const pending = pendingField === undefined ? (inHead ?? []) : (JSON.parse(pendingField) as string[]);
    if (pendingField !== undefined) pendingJson.set(pending, pendingField);
    const shownJson = fields.get(shownField(stage.name));
    const othersJsonField = fields.get(othersField(stage.name));
    const shown = shownJson === undefined ? {} : (JSON.parse(shownJson) as Shown);
    const otherReleases = othersJsonField === undefined ? shown.otherReleases : ((JSON.parse(othersJsonField) as Shown['otherReleases'] | null) ?? undefined);
    if (otherReleases && othersJsonField !== undefined) othersJson.set(otherReleases, othersJsonField);
    const { timeline } = shown;
    return { ...stage, ...(timeline ? { timeline } : {}), ...(otherReleases ? { otherReleases } : {}), targets, pending };
  });
  const notices = JSON.parse(fields.get(NOTICES_FIELD) ?? '[]') as string[];
  const events = JSON.parse(fields.get(EVENTS_FIELD) ?? '[]') as ReleaseRecord['events'];
  const appSetsField = fields.get(APPSETS_FIELD);
  if (appSetsField === undefined) return { ...head, stages, notices, events, version };
  const appSets = decodeAppSets(fields, appSetsField);
  return { ...head, appSets, stages, notices, events, version };
}

/** Fields to write and fields to delete to turn `before` into `after`. */
export function diffFields(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): { set: [string, string][]; del: string[] } {
  const set: [string, string][] = [];
  for (const [field, value] of after) if (before.get(field) !== value) set.push([field, value]);
  const del = [...before.keys()].filter((f) => !after.has(f));
  return { set, del };
}
