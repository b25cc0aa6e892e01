/** How one stage reads at a glance: icon, word, canary position, per-target counts. */
import type { RolloutPhase } from '../../facts/fact.js';
import type { StageState, StageStatus, TargetState } from '../../releases/record/record.js';

export const STATUS_ICON: Record<StageStatus, string> = {
  Waiting: ':hourglass_flowing_sand:',
  Progressing: ':arrows_counterclockwise:',
  Paused: ':double_vertical_bar:',
  Healthy: ':white_check_mark:',
  Degraded: ':x:',
  Aborted: ':no_entry:',
  Stalled: ':warning:',
};

/** Targets in a stable order, so the same record always lists them the same way. */
export function sortedTargets(stage: StageState): TargetState[] {
  return Object.keys(stage.targets)
    .sort()
    .map((k) => stage.targets[k])
    .filter((t): t is TargetState => t !== undefined);
}

/** "step 3/8", or "steps 2–3/8" when the targets of a stage are at different steps ("step 3" when N is unknown). */
export function stepText(targets: readonly TargetState[]): string | undefined {
  const steps = targets
    .map((t) => t.step)
    .filter((s): s is NonNullable<TargetState['step']> => s !== undefined && (s.count === undefined || s.count > 0));
  if (steps.length === 0) return undefined;
  const human = (s: { index: number; count?: number }) => (s.count === undefined ? s.index + 1 : Math.min(s.index + 1, s.count));
  const lo = Math.min(...steps.map(human));
  const hi = Math.max(...steps.map(human));
  const counts = [...new Set(steps.map((s) => s.count).filter((c): c is number => c !== undefined))].sort((a, b) => a - b);
  const of = counts.length === 0 ? '' : counts.length === 1 ? `/${counts[0]}` : `/${counts[0]}–${counts[counts.length - 1]}`;
  return lo === hi ? `step ${lo}${of}` : `steps ${lo}–${hi}${of}`;
}

export function weightText(targets: readonly TargetState[]): string | undefined {
  const weights = targets.map((t) => t.weight).filter((w): w is number => w !== undefined);
  if (weights.length === 0) return undefined;
  const lo = Math.min(...weights);
  const hi = Math.max(...weights);
  return lo === hi ? `weight ${lo}%` : `weight ${lo}–${hi}%`;
}

const PHASE_ORDER: RolloutPhase[] = ['Healthy', 'Progressing', 'Paused', 'Degraded', 'Unknown'];

/**
 * "3/5 Healthy · 1 Paused · 1 not started", only when a stage has several targets. Pending
 * targets (known to the stage, not yet at this release) count in the denominator.
 */
export function countsText(targets: readonly TargetState[], pending: readonly string[] = []): string | undefined {
  const total = targets.length + pending.length;
  if (total < 2) return undefined;
  const byPhase = new Map<string, number>();
  let aborted = 0;
  for (const t of targets) {
    if (t.aborted) aborted += 1;
    else byPhase.set(t.phase, (byPhase.get(t.phase) ?? 0) + 1);
  }
  const parts = [`${byPhase.get('Healthy') ?? 0}/${total} Healthy`];
  for (const phase of PHASE_ORDER.slice(1)) {
    const n = byPhase.get(phase);
    if (n) parts.push(`${n} ${phase}`);
  }
  if (aborted) parts.push(`${aborted} Aborted`);
  if (pending.length > 0) parts.push(`${pending.length} not started`);
  return parts.join(' · ');
}

/** Targets a person should look at, worst first. */
export function troubledTargets(targets: readonly TargetState[]): TargetState[] {
  const rank = (t: TargetState) => (t.aborted ? 0 : t.phase === 'Degraded' ? 1 : t.phase === 'Paused' ? 2 : t.phase === 'Unknown' ? 3 : 9);
  return targets.filter((t) => rank(t) < 9).sort((a, b) => rank(a) - rank(b));
}
