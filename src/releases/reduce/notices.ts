/**
 * Replies are keyed notices: the key is recorded with the record (bounded), and the reply comes
 * back only the first time, whatever order or how often facts arrive.
 */
import type { TargetRef } from '../../facts/fact.js';
import { MAX_NOTICES } from './context.js';
import { REPLIES_NEEDING_A_PERSON, type Effect, type ReleaseRecord, type ReplyDetail, type ReplyKind, type TargetState } from '../record/record.js';

export type ReplyEffect = Extract<Effect, { type: 'thread.reply' }>;

/** The one way a reply is announced. */
export function noticeReply(record: ReleaseRecord, key: string, kind: ReplyKind, detail: ReplyDetail, stage?: string, target?: TargetRef): ReplyEffect | undefined {
  if (record.notices.includes(key)) return undefined;
  record.notices.push(key);
  if (record.notices.length > MAX_NOTICES) record.notices.splice(0, record.notices.length - MAX_NOTICES);
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
