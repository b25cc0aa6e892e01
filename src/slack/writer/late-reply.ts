/**
 * A reply that reaches Slack after the thread's replies already told the release's end (a writer
 * paused with the reply in hand) must not read as if it happened after the end. It is still
 * posted (nothing accepted is lost), marked as earlier. Only replies tell an end here: the parent
 * sits above every reply and always shows the latest state, so a reply landing after the parent
 * was edited to Complete but before "release complete" reads in order (and routine replies often
 * do, in a fast release). The rule is here alone, pure: the writer reads what the thread told.
 */
import type { ReleaseStatus } from '../../releases/record/record.js';
import type { ReplyProduced } from './jobs.js';

/** The states a thread can show as the release's end. Failed is one even though a release can leave it: it was shown. */
export const ENDED_STATUSES: readonly ReleaseStatus[] = ['Complete', 'Failed', 'Aborted', 'Superseded'];

/** The latest end the thread's replies told, at the record version that ended it. */
export interface ThreadEnd {
  version: number;
  status: ReleaseStatus;
}

/** A reply to be posted as earlier: when it happened, and the end it is earlier than. */
export interface LateReply {
  at: number;
  before: ReleaseStatus;
}

/**
 * Late when it was produced from an older record than the end the thread already shows. A reply
 * produced at the ending version itself ("prod is Healthy" beside "release complete") is not, nor
 * one the writer cannot place (a job queued before jobs said where they came from).
 */
export function lateReply(produced: ReplyProduced | undefined, shown: ThreadEnd | undefined): LateReply | undefined {
  if (!produced || !shown || produced.version >= shown.version) return undefined;
  return { at: produced.at, before: shown.status };
}

/** The end a reply produced at `produced` tells once posted (an ending record's), if any; the thread keeps the later of it and what it showed (glidepathSlackMarkEnded). */
export function endTold(produced: ReplyProduced | undefined): ThreadEnd | undefined {
  if (!produced || !ENDED_STATUSES.includes(produced.status)) return undefined;
  return { version: produced.version, status: produced.status };
}
