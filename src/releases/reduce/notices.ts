/**
 * Replies are keyed notices: the key is recorded with the record (bounded), and the reply comes
 * back only the first time, whatever order or how often facts arrive.
 */
import type { TargetRef } from '../../facts/fact.js';
import { MAX_NOTICES } from './context.js';
import { pushBounded, writesOf } from '../record/bounded-lists.js';
import { REPLIES_NEEDING_A_PERSON, type Effect, type ReleaseRecord, type ReplyDetail, type ReplyKind, type TargetState } from '../record/record.js';

export type ReplyEffect = Extract<Effect, { type: 'thread.reply' }>;

/**
 * The record's notice keys as a set, kept beside its array: every fact's derive asks about each
 * paused or failing target, and a scan of up to MAX_NOTICES keys per ask was 4% of a worker's
 * time (bench:ingest, 6 Dec 2026). noticeReply keeps the set in step with its own writes; a set
 * that missed a write of its array (record/bounded-lists.ts counts them) is built again.
 */
const noticeSets = new WeakMap<readonly string[], { keys: Set<string>; writes: number }>();

function noticeSetOf(notices: readonly string[]): { keys: Set<string>; writes: number } {
  let set = noticeSets.get(notices);
  if (!set || set.writes !== writesOf(notices)) noticeSets.set(notices, (set = { keys: new Set(notices), writes: writesOf(notices) }));
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
  for (const dropped of pushBounded(record.notices, key, MAX_NOTICES)) set.keys.delete(dropped);
  set.keys.add(key);
  set.writes = writesOf(record.notices);
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
