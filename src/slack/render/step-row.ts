/** What a stage row says of an ApplicationSet step: which step, and how many members are done at which revision. */
import type { StageState } from '../../releases/record/record.js';
import { shortRevision } from '../../releases/record/revisions.js';
import { code, untrusted } from '../../text/mrkdwn.js';

export interface StepRow {
  /** Parts of the row's first line, after the status. */
  head: string[];
  /** A line of its own (the out-of-order failure, or one waiting for confirmation), when there is one. */
  line?: string;
}

const revisionList = (revisions: readonly string[]): string => revisions.map((r) => code(shortRevision(r), 40)).join(', ');

/** Each child at its own revisions: one shared revision, one child's (several sources), or each child's. */
function revisionsText(p: NonNullable<StageState['stepProgress']>): string {
  if (p.revision !== undefined) return ` at ${code(shortRevision(p.revision), 40)}`;
  const own = p.revisions ?? [];
  if (own.length === 0) return '';
  const first = own[0]!.revisions;
  if (own.every((o) => o.revisions.join() === first.join())) return ` at ${revisionList(first)}`;
  return ` · ${own.map((o) => `${code(o.application, 120)} at ${revisionList(o.revisions)}`).join('; ')}`;
}

export function stepRow(stage: StageState): StepRow | undefined {
  const p = stage.stepProgress;
  if (!p) return undefined;
  const head: string[] = [];
  if (p.step !== undefined) head.push(p.stepCount !== undefined ? `step ${p.step} of ${p.stepCount}` : `step ${p.step}`);
  head.push(p.known ? `${p.done}/${p.members} Healthy${revisionsText(p)}` : 'step membership not known yet (the ApplicationSet was not heard)');
  // When every child moved on, the row's last line says so (parent.ts); when some did, the head does.
  if (p.movedOn && Object.values(stage.targets).some((t) => t.supersededBy === undefined)) head.push(`${p.movedOn} moved on`);
  const line = p.outOfOrder
    ? `:x: out of order: ${untrusted(p.outOfOrder, 300, { oneLine: true })}`
    : p.unconfirmed
      ? `:hourglass_flowing_sand: waiting for confirmation: ${untrusted(p.unconfirmed, 300, { oneLine: true })} (a delayed fact looks the same)`
      : p.comparing
        ? `:hourglass_flowing_sand: waiting for Argo CD to compare the new revision: ${p.comparing.named.map((n) => code(n, 120)).join(', ')}${p.comparing.count > p.comparing.named.length ? ` and ${p.comparing.count - p.comparing.named.length} more` : ''}`
        : undefined;
  return { head, ...(line ? { line } : {}) };
}
