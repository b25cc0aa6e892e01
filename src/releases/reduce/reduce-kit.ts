/**
 * What the reducers of each kind of fact (reduce-appset.ts, reduce-kargo.ts) share with the
 * core reducer (reduce.ts): the same outcome values, the same way to open, hear and finish a
 * record, so every kind derives, replies and arms the watchdog alike.
 */
import type { ReduceContext } from './context.js';
import type { Effect, ReleaseEventKind, ReleaseRecord } from '../record/record.js';

export type ReduceOutcome = 'applied' | 'heartbeat' | 'stale' | 'out-of-order' | 'ignored';

export interface Reduction {
  /** The next record, or undefined when the fact changes nothing. */
  record?: ReleaseRecord;
  effects: Effect[];
  outcome: ReduceOutcome;
  /** Why a fact was ignored, for logs. */
  reason?: string;
}

export interface ReduceKit {
  unchanged(outcome: ReduceOutcome, reason?: string): Reduction;
  openRecord(current: ReleaseRecord | undefined, ctx: ReduceContext, releaseId: string, idSource: ReleaseRecord['idSource'], images: string[], now: number): ReleaseRecord;
  hear(record: ReleaseRecord, now: number, effects: Effect[]): void;
  finish(record: ReleaseRecord, now: number, ctx: ReduceContext, outcome: ReduceOutcome, extra?: Effect[]): Reduction;
  addEvent(record: ReleaseRecord, at: number, kind: ReleaseEventKind, detail: string, target?: string): void;
}
