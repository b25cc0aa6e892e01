/**
 * The stage's history for the release timeline image: the rest of the record holds only the
 * present (a target's phase, its step now), and a finished release's image must show when each
 * step began, how long each pause lasted and who ended it. Pure; called by the reducer with a
 * target's observation before and after a fact. Bounded, so a flapping Rollout cannot grow the
 * record: the oldest entries go first.
 */
import type { ReduceContext } from './context.js';
import { abortedBy, resumedBy, waitsForApproval } from './pause-end.js';
import type { StageState, TargetState, TimelineHold, TimelineStep } from '../record/record.js';

export const MAX_TIMELINE_STEPS = 40;
export const MAX_TIMELINE_HOLDS = 20;

/** `items` with `item` appended, the oldest let go past `max`, and how many were let go. */
function appendBounded<T>(items: readonly T[], item: T, max: number): { items: T[]; dropped: number } {
  const dropped = Math.max(0, items.length + 1 - max);
  return { items: [...items.slice(dropped), item], dropped };
}

/** A fact was applied to the stage at `now`: its first one starts the stage's bar. */
export function noteStageFact(stage: StageState, now: number): void {
  if (stage.timeline === undefined) stage.timeline = { startedAt: now, steps: [], holds: [] };
  else if (now < stage.timeline.startedAt) stage.timeline = { ...stage.timeline, startedAt: now };
}

function held(t: TargetState): TimelineHold['kind'] | undefined {
  if (t.supersededBy !== undefined || t.aborted || t.phase !== 'Paused') return undefined;
  return waitsForApproval(t) ? 'approval' : 'pause';
}

/** The same pause: the same pod template at the same step. */
function samePause(prev: TargetState, next: TargetState): boolean {
  return prev.podHash === next.podHash && prev.step?.index === next.step?.index;
}

/**
 * A Rollout's observation moved from `prev` to `next` (same object; `prev` undefined on its first):
 * a step it had not been heard at begins, a pause begins, or the pause it was in ends (and who
 * ended it, as the pause's settled reply says).
 */
export function noteRolloutChange(stage: StageState, prev: TargetState | undefined, next: TargetState, now: number, ctx: Pick<ReduceContext, 'ownActions'>): void {
  noteStageFact(stage, now);
  const timeline = stage.timeline!;
  const name = next.ref.name;
  let steps = timeline.steps;
  let holds = timeline.holds;
  let stepsDropped = timeline.stepsDropped ?? 0;
  let holdsDropped = timeline.holdsDropped ?? 0;
  if (next.step !== undefined) {
    const last = steps.findLast((s) => s.target === name);
    if (last?.index !== next.step.index) {
      const step: TimelineStep = { target: name, index: next.step.index, ...(next.step.count !== undefined ? { count: next.step.count } : {}), at: now };
      const appended = appendBounded(steps, step, MAX_TIMELINE_STEPS);
      steps = appended.items;
      stepsDropped += appended.dropped;
    }
  }
  const open = holds.findIndex((h) => h.target === name && h.to === undefined);
  const nowHeld = held(next);
  if (open >= 0 && prev && !(nowHeld && samePause(prev, next))) {
    const hold = holds[open]!;
    const ended: Partial<TimelineHold> = next.aborted ? { how: 'aborted', ...abortedBy(next, ctx) } : next.podHash !== prev.podHash ? { how: 'new-version' } : { how: 'resumed', ...(hold.kind === 'approval' ? resumedBy(prev, ctx) : {}) };
    holds = holds.map((h, i) => (i === open ? { ...h, to: now, ...ended } : h));
  } else if (open >= 0 && nowHeld === 'approval' && holds[open]!.kind === 'pause') {
    // The same pause came to wait for a person (its reason changed): it is drawn as a wait.
    holds = holds.map((h, i) => (i === open ? { ...h, kind: 'approval' } : h));
  }
  const stillOpen = holds.some((h) => h.target === name && h.to === undefined);
  if (nowHeld && !stillOpen) {
    const hold: TimelineHold = { target: name, kind: nowHeld, ...(next.step !== undefined ? { step: next.step.index } : {}), from: now };
    const appended = appendBounded(holds, hold, MAX_TIMELINE_HOLDS);
    holds = appended.items;
    holdsDropped += appended.dropped;
  }
  if (steps !== timeline.steps || holds !== timeline.holds) {
    stage.timeline = { ...timeline, steps, holds, ...(stepsDropped > 0 ? { stepsDropped } : {}), ...(holdsDropped > 0 ? { holdsDropped } : {}) };
  }
}
