/**
 * What a save of a release record sends, found from what changed instead of from the whole
 * record: the store keeps, with the fields it last read or saved, the target objects they were
 * encoded from (per stage, by key). Targets are replaced when they change (target-edit.ts), so a
 * target still the same object needs no look; the small fields (head, notices, events) are
 * encoded each time and compared. The result is exactly encodeRecord's fields and diffFields'
 * changes (test/releases/record-codec.test.ts), at a cost proportional to what the fact changed.
 */
import type { ReleaseRecord, TargetState } from '../record/record.js';
import { targetKeys, writePosition, writtenSince, type WriteMark } from '../record/target-writes.js';
import { diffFields, encodeAppSets, encodeHead, encodeKeys, encodePending, encodeRecord, encodeTarget, isAppSetsField, isStageField, keysField, pendingField, emptiedSlots, shownField, targetField } from './record-codec.js';

export interface Encoded {
  /** Every field of the record as Redis holds it. */
  fields: Map<string, string>;
  /** Per stage, by key, the target objects the fields were encoded from; undefined: not known (a record just read), the next save compares every field. */
  targets?: Map<string, Map<string, TargetState>>;
  /** Per stage, its key order's chunks as saved. */
  keyChunks?: Map<string, string[]>;
  appSets?: ReleaseRecord['appSets'];
  /** Per stage, its targets object when saved and where its write log was (target-writes.ts): the next save looks only at the keys written since. */
  marks?: Map<string, { targets: object; mark: WriteMark }>;
}

export interface Changes {
  set: [string, string][];
  del: string[];
  /** What Redis holds once the changes are written. */
  after: Encoded;
}

function known(record: ReleaseRecord, fields: Map<string, string>): Encoded {
  const targets = new Map(record.stages.map((s) => [s.name, new Map(Object.entries(s.targets))]));
  const keyChunks = new Map(record.stages.map((s) => [s.name, encodeKeys(s.targets, targetKeys(s.targets))]));
  return { fields, targets, keyChunks, appSets: record.appSets, marks: marksOf(record) };
}

function marksOf(record: ReleaseRecord): NonNullable<Encoded['marks']> {
  return new Map(record.stages.map((s) => [s.name, { targets: s.targets, mark: writePosition(s.targets) }]));
}

/**
 * The changes that save `record` over `before` (takes `before` over: its maps become the result's).
 * Without `before.targets`, every field is encoded and compared.
 */
export function encodeChanges(record: ReleaseRecord, before: Encoded | undefined): Changes {
  if (!before?.targets || !before.keyChunks) {
    const fields = encodeRecord(record);
    return { ...diffFields(before?.fields ?? new Map(), fields), after: known(record, fields) };
  }
  const { fields, targets, keyChunks } = before;
  const marks = before.marks ?? new Map<string, { targets: object; mark: WriteMark }>();
  const set: [string, string][] = [];
  const del: string[] = [];
  const put = (field: string, json: string): void => {
    if (fields.get(field) === json) return;
    fields.set(field, json);
    set.push([field, json]);
  };
  const drop = (field: string): void => {
    if (fields.delete(field)) del.push(field);
  };
  // The timeline slots saved before, from each stage's `x` field as saved: a slot the timeline no longer fills goes.
  const shownBefore = record.stages.map((stage) => fields.get(shownField(stage.name)));
  for (const [field, json] of encodeHead(record)) put(field, json);
  record.stages.forEach((stage, i) => {
    if (fields.get(shownField(stage.name)) !== shownBefore[i]) for (const field of emptiedSlots(stage.name, shownBefore[i], stage.timeline)) drop(field);
  });
  if (record.appSets !== before.appSets) {
    const appSetFields = record.appSets ? encodeAppSets(record.appSets, before.appSets) : [];
    const names = new Set(appSetFields.map(([f]) => f));
    for (const field of [...fields.keys()]) if (isAppSetsField(field) && !names.has(field)) drop(field);
    for (const [field, json] of appSetFields) put(field, json);
  }
  const names = new Set(record.stages.map((s) => s.name));
  for (const gone of [...targets.keys()].filter((name) => !names.has(name))) {
    for (const field of [...fields.keys()]) if (isStageField(field, gone)) drop(field);
    targets.delete(gone);
    keyChunks.delete(gone);
  }
  for (const stage of record.stages) {
    put(pendingField(stage.name), encodePending(stage.pending));
    // Listed once: a step stage's targets are thousands, and listing them costs more than reading them.
    const keys = targetKeys(stage.targets);
    const chunks = encodeKeys(stage.targets, keys);
    const previous = keyChunks.get(stage.name) ?? [];
    if (chunks !== previous) {
      chunks.forEach((json, i) => put(keysField(stage.name, i), json));
      for (let i = chunks.length; i < previous.length; i++) drop(keysField(stage.name, i));
      keyChunks.set(stage.name, chunks);
    }
    let saved = targets.get(stage.name);
    if (!saved) targets.set(stage.name, (saved = new Map()));
    const mark = marks.get(stage.name);
    // The same targets object as saved: only the keys written since can differ from what was saved.
    const written = mark?.targets === stage.targets ? writtenSince(stage.targets, mark.mark) : undefined;
    for (const key of written ?? keys) {
      const target = stage.targets[key];
      if (target === undefined) {
        if (saved.delete(key)) drop(targetField(stage.name, key));
        continue;
      }
      if (saved.get(key) === target) continue;
      put(targetField(stage.name, key), encodeTarget(target));
      saved.set(key, target);
    }
    marks.set(stage.name, { targets: stage.targets, mark: writePosition(stage.targets) });
    // Keys only go when the key order changes, and only when `saved` holds more than the stage (it holds every key of it now).
    if (!written && chunks !== previous && saved.size > keys.length) {
      for (const key of [...saved.keys()]) {
        if (key in stage.targets) continue;
        saved.delete(key);
        drop(targetField(stage.name, key));
      }
    }
  }
  for (const name of [...marks.keys()]) if (!names.has(name)) marks.delete(name);
  return { set, del, after: { fields, targets, keyChunks, appSets: record.appSets, marks } };
}
