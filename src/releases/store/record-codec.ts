/**
 * A release record as Redis hash fields: one field for the release and its stage rows, one per
 * target, one per stage for its target keys in order and one for its pending targets. A fact usually changes one target, so a save
 * sends that target and the small head instead of the whole record (a stage of a hundred
 * Rollouts is tens of kilobytes; a stage's pending list can name thousands of targets).
 */
import type { AppSetState } from '../record/appset-record.js';
import type { ReleaseRecord, StageState, StageTimeline, TargetState, TimelineHold, TimelineStep } from '../record/record.js';
import { MAX_TIMELINE_HOLDS, MAX_TIMELINE_STEPS } from '../reduce/timeline.js';
import { decodeMembers, encodeMembers } from './appset-membership-codec.js';
import { targetKeys } from '../record/target-writes.js';
import { writesOf } from '../record/bounded-lists.js';
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
export const shownField = (stage: string): string => `${SHOWN_PREFIX}${stage}`;
/**
 * What the stage's `x` field holds. Records saved before the timeline had slots carry it whole
 * (`timeline` with its steps and holds), and before the other releases had a field of their own,
 * those too.
 */
type Shown = Pick<StageState, 'timeline' | 'otherReleases'> & { slots?: TimelineSlots };
/**
 * A stage's other releases apart from its timeline: the timeline changes with most facts of a
 * canary (a step begins), the other releases (tens of target names) seldom, and in one field
 * every step sent them again (bench/curve.ts: bytes per fact grew with the fleet).
 */
const OTHERS_PREFIX = 'o\u0000';
const othersField = (stage: string): string => `${OTHERS_PREFIX}${stage}`;
/**
 * A stage's timeline in slots: each step and each hold in a field of its own, step i (the
 * (stepsDropped + i)th heard) in slot (stepsDropped + i) % ring. The timeline grows by one step
 * or hold at a time and its oldest go first, so a new step writes one slot of a hundred bytes and
 * the small `x` field, where the whole timeline (tens of entries once a stage has a few dozen
 * targets) was sent again on most facts of a canary (bench/curve.ts: bytes per fact grew with the
 * fleet). `ring`: the slot counts the record was written with (the bounds, timeline.ts).
 */
interface TimelineSlots {
  steps: number;
  holds: number;
  ring: [number, number];
}
const RING: [number, number] = [MAX_TIMELINE_STEPS, MAX_TIMELINE_HOLDS];
const slotField = (stage: string, kind: 's' | 'h', slot: number): string => `${SHOWN_PREFIX}${stage}\u0000${kind}${slot}`;
/** Encodings of timeline entries, by entry: timeline.ts replaces an entry it changes, never changes one in place. */
const entryJson = new WeakMap<TimelineStep | TimelineHold, string>();

function encodeEntry(entry: TimelineStep | TimelineHold): string {
  let json = entryJson.get(entry);
  if (json === undefined) {
    json = JSON.stringify(entry);
    entryJson.set(entry, json);
  }
  return json;
}

/**
 * A stage's timeline fields, by timeline: timeline.ts replaces a stage's timeline when it changes,
 * never changes one in place, and every save encodes each stage's (60 slots at most): kept, a
 * save of an unchanged timeline builds nothing.
 */
const shownFields = new WeakMap<StageTimeline, { stage: string; fields: readonly [string, string][] }>();

/** The stage's `x` field and its timeline's slots. */
function encodeShown(stage: string, timeline: StageTimeline | undefined): readonly [string, string][] {
  if (timeline === undefined) return [[shownField(stage), '{}']];
  const kept = shownFields.get(timeline);
  if (kept?.stage === stage) return kept.fields;
  const { steps, holds, ...rest } = timeline;
  const slots: TimelineSlots = { steps: steps.length, holds: holds.length, ring: RING };
  const fields: [string, string][] = [[shownField(stage), JSON.stringify({ timeline: rest, slots })]];
  const entries = [...steps, ...holds];
  filledSlots(stage, slots, timeline, RING).forEach((field, i) => fields.push([field, encodeEntry(entries[i] as TimelineStep | TimelineHold)]));
  shownFields.set(timeline, { stage, fields });
  return fields;
}

function decodeTimeline(fields: ReadonlyMap<string, string>, stage: string, shown: Shown): StageTimeline | undefined {
  const { timeline, slots } = shown;
  if (timeline === undefined || slots === undefined) return timeline;
  const read = <T extends TimelineStep | TimelineHold>(kind: 's' | 'h', count: number, dropped: number, ring: number): T[] =>
    Array.from({ length: count }, (_, i) => {
      const json = fields.get(slotField(stage, kind, (dropped + i) % ring)) as string;
      const entry = JSON.parse(json) as T;
      entryJson.set(entry, json);
      return entry;
    });
  const steps = read<TimelineStep>('s', slots.steps, timeline.stepsDropped ?? 0, slots.ring[0]);
  const holds = read<TimelineHold>('h', slots.holds, timeline.holdsDropped ?? 0, slots.ring[1]);
  return { ...timeline, steps, holds };
}

/** The slots a timeline fills, as field names. */
function filledSlots(stage: string, counts: { steps: number; holds: number }, dropped: { stepsDropped?: number; holdsDropped?: number }, ring: readonly [number, number]): string[] {
  const filled: string[] = [];
  for (let i = 0; i < counts.steps; i++) filled.push(slotField(stage, 's', ((dropped.stepsDropped ?? 0) + i) % ring[0]));
  for (let i = 0; i < counts.holds; i++) filled.push(slotField(stage, 'h', ((dropped.holdsDropped ?? 0) + i) % ring[1]));
  return filled;
}

/**
 * The timeline slots a stage's `x` field `before` (its JSON as saved) says are filled and the
 * stage's timeline now does not fill: none while the bounds stay the same (a slot let go is
 * filled again at once), the rest when they change or the timeline goes.
 */
export function emptiedSlots(stage: string, before: string | undefined, timeline: StageTimeline | undefined): string[] {
  if (before === undefined) return [];
  const { timeline: was, slots } = JSON.parse(before) as Shown;
  if (was === undefined || slots === undefined) return [];
  const filled = filledSlots(stage, slots, was, slots.ring);
  if (timeline === undefined) return filled;
  const now = new Set(filledSlots(stage, { steps: timeline.steps.length, holds: timeline.holds.length }, timeline, RING));
  return filled.filter((field) => !now.has(field));
}

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
  field === pendingField(stage) || field === shownField(stage) || field.startsWith(`${shownField(stage)}\u0000`) || field === othersField(stage) || field.startsWith(`${KEYS_PREFIX}${stage}\u0000`) || field.startsWith(`${TARGET_PREFIX}${stage}\u0000`);

/**
 * Encodings of a record's notices and events, by list, kept while the list has no write since
 * (record/bounded-lists.ts): up to 500 notice keys were encoded on every save.
 */
const boundedJson = new WeakMap<readonly unknown[], { writes: number; json: string }>();

function encodeBounded(list: readonly unknown[]): string {
  const kept = boundedJson.get(list);
  const writes = writesOf(list);
  if (kept?.writes === writes) return kept.json;
  const json = JSON.stringify(list);
  boundedJson.set(list, { writes, json });
  return json;
}

/** The head, notices and events fields, and each stage's timeline and other releases: the small parts of a record, encoded on every save. */
export function encodeHead(record: ReleaseRecord): [string, string][] {
  const { version: _version, stages, notices, events, appSets: _appSets, ...rest } = record;
  const head: Head = {
    ...rest,
    stages: stages.map(({ targets: _targets, pending: _pending, timeline: _timeline, otherReleases: _others, ...stage }) => stage),
  };
  return [
    [HEAD_FIELD, JSON.stringify(head)],
    [NOTICES_FIELD, encodeBounded(notices)],
    [EVENTS_FIELD, encodeBounded(events)],
    ...stages.flatMap(({ name, timeline, otherReleases }): [string, string][] => [...encodeShown(name, timeline), [othersField(name), encodeOthers(otherReleases)]]),
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
    const timeline = decodeTimeline(fields, stage.name, shown);
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
