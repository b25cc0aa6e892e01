/**
 * The small interfaces the release pipeline talks through, so the reducer worker does not know
 * about Slack, and the Slack writer does not know how records are stored.
 */
import type { Effect, ReleaseRecord } from '../record/record.js';

export type ThreadEffect = Extract<Effect, { type: 'thread.render' | 'thread.reply' | 'thread.settle' }>;

/** Receives the Slack-facing effects of a saved record (implemented by the Slack outbox). */
export interface ThreadEffectSink {
  /**
   * Must be idempotent per effect id: the worker may hand the same effects again after a crash
   * between saving the record and clearing its outbox.
   */
  send(record: ReleaseRecord, effects: ThreadEffect[]): Promise<void>;
}

/** Read side of the release store. */
export interface ReleaseReader {
  get(pipeline: string, releaseId: string): Promise<ReleaseRecord | undefined>;
  /** Newest first. */
  list(pipeline: string, options?: { includeFinished?: boolean; limit?: number }): Promise<ReleaseRecord[]>;
}
