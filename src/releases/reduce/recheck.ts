/**
 * Due-time re-evaluation. Some replies become due with time alone: an Unhealthy Kargo Stage is
 * reported when its grace ends, and Kargo (no notifications, a watch that only speaks on change)
 * may say nothing more until the next resync, minutes later. The reducer asks for that moment with
 * a `release.recheck` effect; the worker schedules it on the watchdog queue (a delayed job whose id
 * is the release and the due time, so asking again for the same moment is one job), and when it is
 * due the watchdog worker hands the reducer a watchdog fact marked `recheck`. Reducing it derives
 * the record again at that time: whatever became due (the reply) goes out; if nothing did (the
 * Stage recovered, the release moved on), nothing changes.
 */
import type { WatchdogFact } from '../../facts/fact.js';
import type { ReduceContext } from './context.js';
import type { Effect, ReleaseRecord } from '../record/record.js';
import type { Reduction } from './reduce-kit.js';
import type { ReduceKit } from './reduce-kit.js';

export function recheckEffect(dueAt: number): Extract<Effect, { type: 'release.recheck' }> {
  return { id: `recheck:${dueAt}`, type: 'release.recheck', dueAt };
}

export function reduceRecheck(current: ReleaseRecord | undefined, fact: WatchdogFact, ctx: ReduceContext, kit: ReduceKit): Reduction {
  if (!current) return kit.unchanged('ignored', 'release no longer exists');
  // On a copy: when nothing became due, the record (a batch's draft) stays as it was.
  const record = kit.openRecord(current, { ...ctx, inPlace: false }, current.releaseId, current.idSource, current.images, fact.receivedAt);
  const reduction = kit.finish(record, Math.max(fact.receivedAt, fact.silentSince), ctx, 'applied');
  if (!reduction.effects.some((e) => e.type === 'thread.reply')) return kit.unchanged('ignored', 'nothing became due');
  return reduction;
}
