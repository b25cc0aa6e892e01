/**
 * The release timeline, as data: a row per stage from its first fact to healthy (or to its
 * failure, or to the release's last fact while it runs), a row per canary step under it, and the
 * pauses on the rows they happened on: a wait for a person (the "paused" reply asked for an
 * approval) apart from a pause nobody had to answer, with who ended the wait. Pure: the record
 * (and the names of the people who acted) in, the model out; the image is drawn from the model
 * alone (release-timeline-image.ts), and the alt text says what the image shows.
 */
import { FINISHED_RELEASE_STATUSES, type ReleaseRecord, type StageState, type TimelineHold } from '../../releases/record/record.js';
import { truncate } from '../../text/mrkdwn.js';

/** Rows drawn: stages first, then steps in order; a release with more says how many were left out. */
export const MAX_TIMELINE_ROWS = 24;
const ALT_TEXT_LIMIT = 1_000;
const LABEL_LIMIT = 40;

export type TimelineRowKind = 'stage' | 'step';
export type TimelineBarKind = 'healthy' | 'failed' | 'running' | 'step';

export interface TimelineRow {
  label: string;
  kind: TimelineRowKind;
  stage: string;
  from: number;
  to: number;
  bar: TimelineBarKind;
}

export interface TimelineMark {
  /** Index into `rows`. */
  row: number;
  kind: TimelineHold['kind'];
  from: number;
  to: number;
  /** What the mark says on the image: how long, and who ended a wait. */
  label: string;
}

export interface ReleaseTimelineChart {
  title: string;
  subtitle: string;
  rows: TimelineRow[];
  marks: TimelineMark[];
  /** The time axis: the earliest start and the latest end drawn. */
  start: number;
  end: number;
  /** Stages not started (no fact at this release): named in the alt text, no bar. */
  notStarted: string[];
  omittedRows: number;
  altText: string;
  filename: string;
}

/** 45 s, 3 min 20 s, 1 h 5 min: what a person reads off a bar. */
export function spanText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A stage row whose first fact was already its healthy one: nothing was heard between its start and healthy. */
function healthyWhenFirstHeard(row: TimelineRow): boolean {
  return row.kind === 'stage' && row.bar === 'healthy' && row.to <= row.from;
}

/**
 * Nothing to draw: every stage Glidepath heard of was already healthy at its first fact (a
 * release deployed before Glidepath watched, or heard of only when done), no step, no pause. An
 * image of bars of no length would say nothing; the thread gets none.
 */
export function timelineObservedNothing(chart: Pick<ReleaseTimelineChart, 'rows' | 'marks'>): boolean {
  return chart.rows.length === 0 || (chart.marks.length === 0 && chart.rows.every((r) => r.kind === 'stage' && healthyWhenFirstHeard(r)));
}

/** The user ids whose names the image labels (the people who ended a wait through Glidepath). */
export function timelineUsers(record: ReleaseRecord): string[] {
  const ids = record.stages.flatMap((s) => (s.timeline?.holds ?? []).flatMap((h) => (h.user ? [h.user] : [])));
  return [...new Set(ids)].slice(0, 10);
}

function stageStart(stage: StageState): number | undefined {
  if (stage.timeline) return stage.timeline.startedAt;
  // Stages whose facts do not keep a timeline (Kargo): the oldest phase change of its targets.
  const since = Object.values(stage.targets).map((t) => t.phaseSince);
  return since.length > 0 ? Math.min(...since) : undefined;
}

function stageEnd(record: ReleaseRecord, stage: StageState, now: number): { to: number; bar: TimelineBarKind } {
  if (stage.healthyAt !== undefined) return { to: stage.healthyAt, bar: 'healthy' };
  if (stage.status === 'Degraded' || stage.status === 'Aborted') return { to: now, bar: 'failed' };
  return { to: now, bar: record.status === 'Failed' || record.status === 'Aborted' ? 'failed' : 'running' };
}

function holdLabel(hold: TimelineHold, to: number, names: ReadonlyMap<string, string>): string {
  const span = spanText(to - hold.from);
  const who = hold.user ? truncate(names.get(hold.user) ?? hold.user, LABEL_LIMIT) : undefined;
  if (hold.kind === 'pause') return `paused ${span}`;
  const waited = `waited ${span} for approval`;
  if (hold.to === undefined) return `${waited}, still waiting`;
  if (hold.how === 'aborted') return `${waited}, aborted${who ? ` by ${who}` : hold.by === 'controller' ? ' by the controller' : hold.by === 'outside' ? ' outside Glidepath' : ''}`;
  if (hold.how === 'new-version' || hold.how === 'superseded') return `${waited}, replaced by a new version`;
  if (who) return `${waited}, approved by ${who}`;
  return hold.by === 'outside' ? `${waited}, resumed outside Glidepath` : `${waited}, resumed`;
}

/** Step rows of a stage: one per step each target was heard at, until its next step or the stage's end. */
function stepRows(stage: StageState, end: number): { row: TimelineRow; target: string; index: number }[] {
  // A step index at the count is the canary done (Argo's currentStepIndex after the last step): no step of its own.
  const steps = (stage.timeline?.steps ?? []).filter((s) => s.count === undefined || s.index < s.count);
  const targets = new Set(steps.map((s) => s.target));
  return steps.map((step, i) => {
    const next = steps.slice(i + 1).find((s) => s.target === step.target);
    const count = step.count !== undefined ? `/${step.count}` : '';
    const who = targets.size > 1 ? `${truncate(step.target, LABEL_LIMIT)} ` : '';
    const row: TimelineRow = { label: `${who}step ${step.index + 1}${count}`, kind: 'step', stage: stage.name, from: step.at, to: Math.max(step.at, Math.min(next?.at ?? end, end)), bar: 'step' };
    return { row, target: step.target, index: step.index };
  });
}

function stageLabel(stage: StageState): string {
  const p = stage.stepProgress;
  const step = p?.step !== undefined ? ` (step ${p.step}${p.stepCount !== undefined ? ` of ${p.stepCount}` : ''})` : '';
  return truncate(`${stage.name}${step}`, LABEL_LIMIT);
}

export function releaseTimeline(record: ReleaseRecord, names: ReadonlyMap<string, string> = new Map()): ReleaseTimelineChart {
  const now = record.finishedAt ?? record.updatedAt;
  const rows: TimelineRow[] = [];
  const marks: TimelineMark[] = [];
  const notStarted: string[] = [];
  let omittedRows = 0;
  const stageRows = record.stages.flatMap((stage) => {
    const from = stageStart(stage);
    if (from === undefined) {
      notStarted.push(stage.name);
      return [];
    }
    const { to, bar } = stageEnd(record, stage, Math.max(now, from));
    return [{ stage, row: { label: stageLabel(stage), kind: 'stage' as const, stage: stage.name, from, to: Math.max(from, to), bar } }];
  });
  let budget = MAX_TIMELINE_ROWS - stageRows.length;
  for (const { stage, row } of stageRows) {
    const stageIndex = rows.push(row) - 1;
    const steps = stepRows(stage, row.to);
    const kept = steps.slice(0, Math.max(0, budget));
    budget -= kept.length;
    omittedRows += steps.length - kept.length;
    const firstStep = rows.length;
    rows.push(...kept.map((s) => s.row));
    for (const hold of stage.timeline?.holds ?? []) {
      const to = Math.max(hold.from, Math.min(hold.to ?? row.to, row.to));
      // On its step's row when that row is drawn (the step heard last before the pause began), else on the stage's row.
      const onStep = kept.findLastIndex((s) => s.target === hold.target && s.index === hold.step && s.row.from <= hold.from);
      marks.push({ row: onStep >= 0 ? firstStep + onStep : stageIndex, kind: hold.kind, from: hold.from, to, label: holdLabel(hold, to, names) });
    }
  }
  const start = rows.length > 0 ? Math.min(...rows.map((r) => r.from)) : record.createdAt;
  const end = rows.length > 0 ? Math.max(...rows.map((r) => r.to)) : now;
  const title = truncate(`Release ${record.releaseId} · ${record.pipeline}`, 80);
  const started = `${record.status}: ${rows.filter((r) => r.kind === 'stage').length} of ${record.stages.length} stages started`;
  const subtitle = timelineObservedNothing({ rows, marks }) ? `${started}, already healthy when first heard` : `${started}, ${spanText(end - start)} from the first fact to the ${FINISHED_RELEASE_STATUSES.includes(record.status) ? 'end' : 'last fact'}`;
  const chart = { title, subtitle, rows, marks, start, end, notStarted, omittedRows, filename: 'release-timeline.png' };
  return { ...chart, altText: altText(record, chart) };
}

function altText(record: ReleaseRecord, chart: Omit<ReleaseTimelineChart, 'altText'>): string {
  const over = timelineObservedNothing(chart) ? ', each already healthy when first heard' : ` over ${spanText(chart.end - chart.start)}`;
  const parts = [`Timeline of release ${record.releaseId} of ${record.pipeline} (${record.status}), one bar per stage and canary step${over}.`];
  chart.rows.forEach((row, i) => {
    const how = row.bar === 'healthy' ? 'to healthy' : row.bar === 'failed' ? 'until it failed' : row.bar === 'running' ? 'so far' : '';
    const holds = chart.marks.filter((m) => m.row === i).map((m) => m.label);
    const span = healthyWhenFirstHeard(row) ? 'already healthy when first heard' : `${spanText(row.to - row.from)} ${how}`;
    const text = row.kind === 'stage' ? `Stage ${row.label}: ${span}` : `${row.label}: ${spanText(row.to - row.from)}`;
    parts.push(`${text}${holds.length > 0 ? ` (${holds.join('; ')})` : ''}.`);
  });
  if (chart.notStarted.length > 0) parts.push(`Not started: ${chart.notStarted.join(', ')}.`);
  if (chart.omittedRows > 0) parts.push(`${chart.omittedRows} more step rows not drawn.`);
  return truncate(parts.join(' '), ALT_TEXT_LIMIT);
}
