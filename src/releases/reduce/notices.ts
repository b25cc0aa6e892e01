/**
 * Replies are keyed notices: the key is recorded with the record (bounded), and the reply comes
 * back only the first time, whatever order or how often facts arrive.
 */
import type { TargetRef } from '../../facts/fact.js';
import { MAX_NOTICES } from './context.js';
import { REPLIES_NEEDING_A_PERSON, type Effect, type ReleaseRecord, type ReplyDetail, type ReplyKind, type TargetState } from '../record/record.js';

export type ReplyEffect = Extract<Effect, { type: 'thread.reply' }>;

/**
 * The record's notice keys as a set, kept beside its array: every fact's derive asks about each
 * paused or failing target, and a scan of up to MAX_NOTICES keys per ask was 4% of a worker's
 * time (bench:ingest, 6 Dec 2026). Only noticeReply changes the array, and it keeps the set in
 * step; a set whose array changed length behind it (a record decoded or copied anew has a new
 * array anyway) is built again.
 */
const noticeSets = new WeakMap<readonly string[], { keys: Set<string>; length: number }>();

function noticeSetOf(notices: readonly string[]): { keys: Set<string>; length: number } {
  let set = noticeSets.get(notices);
  if (!set || set.length !== notices.length) noticeSets.set(notices, (set = { keys: new Set(notices), length: notices.length }));
  return set;
}

/** Whether the reply keyed `key` was announced for this record already. */
export function hasNotice(record: ReleaseRecord, key: string): boolean {
  return noticeSetOf(record.notices).keys.has(key);
}

/** The one way a reply is announced. */
export function noticeReply(record: ReleaseRecord, key: string, kind: ReplyKind, detail: ReplyDetail, stage?: string, target?: TargetRef): ReplyEffect | undefined {
  const set = noticeSetOf(record.notices);
  if (set.keys.has(key)) return undefined;
  record.notices.push(key);
  set.keys.add(key);
  if (record.notices.length > MAX_NOTICES) for (const dropped of record.notices.splice(0, record.notices.length - MAX_NOTICES)) set.keys.delete(dropped);
  set.length = record.notices.length;
  return { id: key, type: 'thread.reply', kind, stage, target, needsPerson: REPLIES_NEEDING_A_PERSON.includes(kind), detail };
}

/**
 * A canary pause step with a duration resumes on its own: the stage shows Paused, but nobody is
 * asked to approve. Every other pause (an indefinite step, an inconclusive analysis, a manual
 * pause) waits for a person.
 */
export function awaitsPerson(t: TargetState): boolean {
  if (!t.pause) return false;
  return !(t.pause.reason === 'CanaryPauseStep' && t.step?.label?.startsWith('pause: '));
}
