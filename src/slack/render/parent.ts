/**
 * The parent message of a release thread: the release and one row per stage. Pure: the same
 * record renders the same message, which is how the writer knows there is nothing to send.
 */
import { releaseDisplayName, releaseIdName } from '../../releases/record/display-name.js';
import type { PipelineConfig } from '../../config/file.js';
import type { ReleaseRecord, ReleaseStatus, StageRejection, StageState } from '../../releases/record/record.js';
import {
  FALLBACK_TEXT_LIMIT,
  MESSAGE_BLOCK_LIMIT,
  MESSAGE_TEXT_BUDGET,
  type Block,
  type RenderedMessage,
} from './blocks.js';
import { fitBlocks } from './fit.js';
import { code, link, slackDate, untrusted } from '../../text/mrkdwn.js';
import { kargoTargetLines } from './kargo-row.js';
import { STATUS_ICON, countsText, sortedTargets, stepText, troubledTargets, weightText } from './stage.js';
import { stepRow } from './step-row.js';

const RELEASE_ICON: Record<ReleaseStatus, string> = {
  Announced: ':mega:',
  InProgress: ':arrows_counterclockwise:',
  Paused: ':double_vertical_bar:',
  Complete: ':white_check_mark:',
  Failed: ':x:',
  Aborted: ':no_entry:',
  Superseded: ':fast_forward:',
};

const MAX_IMAGES = 6;
const MAX_TROUBLED_TARGETS = 8;
const MAX_EVENTS = 3;

function releaseFields(record: ReleaseRecord): string {
  const lines: string[] = [];
  const shown = record.images.slice(0, MAX_IMAGES).map((i) => code(i, 300));
  const more = record.images.length - shown.length;
  if (shown.length > 0) lines.push(`*Images:* ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  const origin: string[] = [];
  if (record.commit) origin.push(`*Commit:* ${code(record.commit.slice(0, 12))}`);
  if (record.pullRequestUrl) origin.push(link(record.pullRequestUrl, 'pull request'));
  if (record.author) origin.push(`merged by ${untrusted(record.author, 80, { oneLine: true })}`);
  if (origin.length > 0) lines.push(origin.join(' · '));
  if (record.announcedAs) lines.push(`announced by CI after its Freight opened ${code(record.releaseId)}`);
  return lines.join('\n');
}

/** How many targets of a stage that mixes apps run other releases. */
function mixedCount(mixed: NonNullable<StageState['otherReleases']>): string {
  const n = mixed.others.reduce((sum, o) => sum + o.count, 0);
  const more = mixed.releaseCount > mixed.others.length ? '+' : '';
  return `${n}${more} ${n === 1 && !more ? 'target' : 'targets'}`;
}

/** A Slack user id as a mention; anything else (it came through the record) is shown as text. */
function person(id: string): string {
  return /^[UW][A-Z0-9]{2,20}$/.test(id) ? `<@${id}>` : untrusted(id, 40, { oneLine: true });
}

/** Who holds a step of the stage and why, or who approved over it (the reason is a person's words: escaped, bounded). */
function rejectionLine(r: StageRejection): string {
  const reason = `“${untrusted(r.reason, 600, { oneLine: true })}”`;
  if (r.overriddenBy !== undefined) return `:arrow_right_hook: ${person(r.overriddenBy)} approved over the rejection by ${person(r.by)}: ${reason}`;
  return `:no_entry_sign: *Rejected* by ${person(r.by)} (${untrusted(r.what, 200, { oneLine: true })}): ${reason}`;
}

function stageRow(stage: StageState, configured: { cluster: string } | undefined, frozen: string | undefined): string {
  const targets = sortedTargets(stage);
  const head = [`${STATUS_ICON[stage.status]} *${untrusted(stage.name, 63, { oneLine: true })}* — ${stage.status}`];
  const step = stepRow(stage);
  for (const part of step ? step.head : [stepText(targets), weightText(targets), countsText(targets, stage.pending ?? [])]) if (part) head.push(part);
  const lines = [head.join(' · ')];
  if (step?.line) lines.push(step.line);
  if (frozen) lines.push(`:snowflake: ${untrusted(frozen, 600, { oneLine: true })}`);
  if (stage.rejection) lines.push(rejectionLine(stage.rejection));

  const tail: string[] = [];
  if (targets.length === 0 && (stage.pending ?? []).length === 0) tail.push(`no targets seen yet in ${untrusted(configured?.cluster ?? stage.cluster, 63, { oneLine: true })}`);
  if (stage.lastHeardAt !== undefined) tail.push(`last heard ${slackDate(stage.lastHeardAt)}`);
  if (stage.healthyAt !== undefined && stage.status !== 'Healthy') tail.push('was healthy for this release');
  const movedOn = [...new Set(targets.map((t) => t.supersededBy))];
  if (targets.length > 0 && !movedOn.includes(undefined)) tail.push(`moved on to ${movedOn.map((r) => code(untrusted(releaseIdName(r ?? ''), 80, { oneLine: true }))).join(', ')}`);
  const mixed = stage.otherReleases;
  if (mixed) tail.push(`mixes apps: ${mixedCount(mixed)} of other releases not waited for (see the thread)`);
  if (tail.length > 0) lines.push(tail.join(' · '));

  lines.push(...kargoTargetLines(targets));
  const troubled = troubledTargets(targets.filter((t) => t.kargo === undefined));
  for (const t of troubled.slice(0, MAX_TROUBLED_TARGETS)) {
    const what = t.aborted ? 'Aborted' : t.phase;
    const message = untrusted(t.message, 280, { oneLine: true });
    const name = untrusted(`${t.ref.namespace}/${t.ref.name}`, 120, { oneLine: true });
    lines.push(`• ${name} — ${what}${message ? `: ${message}` : ''}`);
  }
  if (troubled.length > MAX_TROUBLED_TARGETS) lines.push(`• and ${troubled.length - MAX_TROUBLED_TARGETS} more`);
  return lines.join('\n');
}

/** `frozen`: the line of each stage an open freeze holds now, by stage name (computed by the caller: this stays pure). */
export function renderParent(record: ReleaseRecord, pipeline: PipelineConfig, frozen?: ReadonlyMap<string, string>): RenderedMessage {
  const id = releaseDisplayName(record).replace(/\s+/g, ' ');
  const blocks: Block[] = [
    {
      // fitBlocks cuts the header to HEADER_TEXT_LIMIT.
      type: 'header',
      text: { type: 'plain_text', text: `Release ${id} — ${pipeline.name}`, emoji: false },
    },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: [`${RELEASE_ICON[record.status]} *${record.status}*`, releaseFields(record)].filter(Boolean).join('\n'),
      },
    },
    { type: 'divider' },
  ];
  const configured = new Map(pipeline.stages.map((s) => [s.name, s]));
  for (const stage of record.stages) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: stageRow(stage, configured.get(stage.name), frozen?.get(stage.name)) } });
  }
  const notes = record.events
    .filter((e) => e.kind === 'scale' || e.kind === 'restart' || e.kind === 'template-change' || e.kind === 'drift')
    .slice(-MAX_EVENTS)
    .map((e) => `${slackDate(e.at)} ${e.kind}${e.target ? ` of ${untrusted(e.target, 120, { oneLine: true })}` : ''}: ${untrusted(e.detail, 200, { oneLine: true })}`);
  const footer = [`last fact ${slackDate(record.lastHeardAt)}`];
  if (record.stall) footer.push(`:warning: silent since ${slackDate(record.stall.silentSince)}`);
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: [...notes, footer.join(' · ')].join('\n') }] });

  const summary = record.stages.map((s) => `${s.name} ${s.status}`).join(', ');
  return {
    text: untrusted(`Release ${id} (${pipeline.name}): ${record.status}. ${summary}`, FALLBACK_TEXT_LIMIT, { oneLine: true }),
    blocks: fitBlocks(blocks, { maxBlocks: MESSAGE_BLOCK_LIMIT, textBudget: MESSAGE_TEXT_BUDGET }),
  };
}
