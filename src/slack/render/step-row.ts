/** What a stage row says of an ApplicationSet step: which step, and how many members are done at which revision. */
import type { StageState } from '../../releases/record.js';
import { code, untrusted } from './mrkdwn.js';

export interface StepRow {
  /** Parts of the row's first line, after the status. */
  head: string[];
  /** A line of its own (the out-of-order failure, or one waiting for confirmation), when there is one. */
  line?: string;
}

export function stepRow(stage: StageState): StepRow | undefined {
  const p = stage.stepProgress;
  if (!p) return undefined;
  const head: string[] = [];
  if (p.step !== undefined) head.push(p.stepCount !== undefined ? `step ${p.step} of ${p.stepCount}` : `step ${p.step}`);
  const at = p.revision ? ` at ${code(p.revision.slice(0, 7), 40)}` : '';
  head.push(p.known ? `${p.done}/${p.members} Healthy${at}` : 'step membership not known yet (the ApplicationSet was not heard)');
  // When every child moved on, the row's last line says so (parent.ts); when some did, the head does.
  if (p.movedOn && Object.values(stage.targets).some((t) => t.supersededBy === undefined)) head.push(`${p.movedOn} moved on`);
  const line = p.outOfOrder
    ? `:x: out of order: ${untrusted(p.outOfOrder, 300, { oneLine: true })}`
    : p.unconfirmed
      ? `:hourglass_flowing_sand: waiting for confirmation: ${untrusted(p.unconfirmed, 300, { oneLine: true })} (a delayed fact looks the same)`
      : undefined;
  return { head, ...(line ? { line } : {}) };
}
