/**
 * Thread replies: what a person needs to know or do. Pure, like the parent: the text comes from
 * the effect's detail and the record, never from the clock.
 */
import type { PauseEnd } from '../../releases/record/record.js';
import { releaseDisplayName } from '../../releases/record/display-name.js';
import type { ReleaseRecord, ThreadReplyEffect } from './types.js';
import {
  FALLBACK_TEXT_LIMIT,
  MESSAGE_BLOCK_LIMIT,
  MESSAGE_TEXT_BUDGET,
  type Block,
  type RenderedMessage,
} from './blocks.js';
import { outOfOrderText } from './appset-reply.js';
import { approveAndAbort, promoteButton } from './buttons.js';
import { fitBlocks } from './fit.js';
import { code, quoted, slackDate, truncate, untrusted } from '../../text/mrkdwn.js';
import { kargoReplyBody } from './kargo-reply.js';
import { mixedStageText } from './mixed-stage.js';
import { stallAwaiting, stallCause } from './stall-reply.js';

function where(effect: ThreadReplyEffect, record: ReleaseRecord): string {
  const stage = effect.stage ? `*${untrusted(effect.stage, 63, { oneLine: true })}*` : `*${untrusted(record.pipeline, 63, { oneLine: true })}*`;
  if (!effect.target) return stage;
  const t = effect.target;
  return `${stage} — ${code(`${t.cluster}/${t.namespace}/${t.name}`)}`;
}

/**
 * After a gap in what Glidepath heard: where the Rollout was next heard and which steps were not
 * seen, said as not known rather than as skipped (a full promotion is said only on evidence).
 */
function unseenSteps(d: ThreadReplyEffect['detail']): string {
  if (d.heardAtStep === undefined || d.stepIndex === undefined) return '';
  const first = d.stepIndex + 2;
  const last = d.stepCount !== undefined ? Math.min(d.heardAtStep, d.stepCount) : d.heardAtStep;
  const steps = first === last ? `step ${first}` : `steps ${first}–${last}`;
  const where = d.stepCount !== undefined && d.heardAtStep >= d.stepCount ? `with all ${d.stepCount} steps done` : `at step ${d.heardAtStep + 1}${d.stepCount !== undefined ? ` of ${d.stepCount}` : ''}`;
  return ` It was next heard ${where}; ${steps} between ${first === last ? 'was' : 'were'} not seen (missed while Glidepath could not hear the cluster).`;
}

function step(effect: ThreadReplyEffect): string {
  const d = effect.detail;
  const parts: string[] = [];
  if (d.stepIndex !== undefined && d.stepCount !== undefined) parts.push(`step ${Math.min(d.stepIndex + 1, d.stepCount)}/${d.stepCount}`);
  if (d.weight !== undefined) parts.push(`weight ${d.weight}%`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function minutesBetween(from: number | undefined, to: number | undefined): string | undefined {
  if (from === undefined || to === undefined || to < from) return undefined;
  return `${Math.round((to - from) / 60_000)} min`;
}

/** Each failing metric: its phase, the values it measured, and the condition they were judged by. Bounded and escaped. */
function metricLines(metrics: ThreadReplyEffect['detail']['metrics']): string {
  if (!metrics || metrics.length === 0) return '';
  const lines = metrics.slice(0, 10).map((m) => {
    const values = m.values.length > 0 ? `measured ${m.values.slice(-5).map((v) => code(v, 120)).join(', ')}` : 'no value measured';
    const condition = m.condition ? `; ${m.conditionKind === 'failure' ? 'failure condition' : 'success condition'} ${code(m.condition, 300)}` : '';
    const why = m.message ? ` (${untrusted(m.message, 300, { oneLine: true })})` : '';
    return `• ${code(m.name, 120)} ${untrusted(m.phase, 20, { oneLine: true })}: ${values}${condition}${why}`;
  });
  return `\n${lines.join('\n')}`;
}

function byWhom(by: ThreadReplyEffect['detail']['by']): string {
  switch (by) {
    case 'outside':
      return ' outside Glidepath';
    case 'glidepath':
      return ' through Glidepath';
    case 'controller':
      return ' by the Rollouts controller';
    case undefined:
      return '';
  }
}

/** A Slack user id from Glidepath's own ledger, shown as a mention only when it is one. */
function byUser(ended: PauseEnd): string {
  return ended.by === 'glidepath' && ended.user && /^[UW][A-Z0-9]{2,20}$/.test(ended.user) ? ` by <@${ended.user}>` : '';
}

/** The line a settled reply ends with: how the pause it asked about ended. */
function settledLine(ended: PauseEnd): string {
  switch (ended.how) {
    case 'resumed':
      return `:arrow_forward: Resumed${byWhom(ended.by)}${byUser(ended)}; these buttons are gone.`;
    case 'promoted':
      return `:arrow_forward: Promoted fully${byWhom(ended.by)}${byUser(ended)}; these buttons are gone.`;
    case 'aborted':
      return `:no_entry: Aborted${byWhom(ended.by)}${byUser(ended)}; these buttons are gone.`;
    case 'new-version':
      return ':arrows_counterclockwise: The Rollout moved to another pod template; these buttons are gone.';
    case 'superseded':
      return `:fast_forward: The Rollout moved on to release ${code(ended.releaseId ?? '?', 200)}; these buttons are gone.`;
  }
}

function body(effect: ThreadReplyEffect, record: ReleaseRecord): string {
  const d = effect.detail;
  const at = where(effect, record);
  switch (effect.kind) {
    case 'paused':
      return `:double_vertical_bar: ${at} is paused${step(effect)} and waits for approval.${quoted(d.message)}${metricLines(d.metrics)}`;
    case 'degraded':
      return `:x: ${at} is Degraded.${quoted(d.message)}`;
    case 'analysis-failed':
      return `:x: ${at}: the analysis failed${step(effect)}.${quoted(d.message)}${metricLines(d.metrics)}`;
    case 'sync-failed': {
      const rev = d.revision ? ` at revision ${code(d.revision.slice(0, 40))}` : '';
      const retries = d.retryCount ? ` after ${d.retryCount} retries` : '';
      return `:x: ${at}: the Argo CD sync failed${rev}${retries}.${quoted(d.message)}`;
    }
    case 'sync-retrying': {
      const attempt = d.retryCount ?? 1;
      const of = d.retryLimit !== undefined ? ` of ${d.retryLimit + 1}` : '';
      const rev = d.revision ? ` at revision ${code(d.revision.slice(0, 40))}` : '';
      return `:warning: ${at}: Argo CD sync attempt ${attempt}${of} failed${rev}; Argo CD retries it and reports Failed only after the last attempt.${quoted(d.message)}`;
    }
    case 'aborted':
      return (
        `:no_entry: ${at} was aborted${byWhom(d.by)}; traffic went back to the stable version.${quoted(d.message)}\n` +
        'Undo is not offered: Argo CD selfHeal would revert it. Revert the change in git to roll back.'
      );
    case 'resumed': {
      const what = d.promotedFully ? 'promoted fully (every remaining step skipped)' : 'resumed';
      return `:arrow_forward: ${at} was ${what}${byWhom(d.by)}${step(effect)}: the pause this thread asked about is over.${unseenSteps(d)}`;
    }
    case 'drift': {
      const seen = (d.images ?? []).slice(0, 5).map((i) => code(i, 300)).join(', ') || 'unknown';
      const expected = (d.expectedImages ?? record.images).slice(0, 5).map((i) => code(i, 300)).join(', ') || 'unknown';
      return `:warning: ${at} runs ${seen}, not this release's ${expected}. Someone changed it outside git (selfHeal may revert it).${quoted(d.message)}`;
    }
    case 'stall': {
      const minutes = minutesBetween(d.silentSince, record.stall?.alertedAt);
      const silent = minutes === '0 min' ? 'under a minute' : (minutes ?? 'a while');
      const since = d.silentSince !== undefined ? ` (silent since ${slackDate(d.silentSince)})` : '';
      return `:warning: No fact from ${at} for ${silent}${since}; ${stallCause(d.stall?.source)}.${stallAwaiting(d.stall?.awaiting)}`;
    }
    case 'heard-again': {
      const since = d.silentSince !== undefined ? ` after silence since ${slackDate(d.silentSince)}` : '';
      return `:ear: Heard from ${at} again${since}.`;
    }
    case 'hook-pinned': {
      return (
        `:pushpin: ${at}: an Argo CD sync${d.revision ? ` of ${code(d.revision.slice(0, 40))}` : ''} is still Running with PostSync hooks while the Rollout is paused. ` +
        'The next sync (a revert too) cannot start until the hooks finish or the operation is terminated.' +
        quoted(d.message)
      );
    }
    case 'appset-out-of-order':
      return outOfOrderText(at, d.outOfOrder, d.message);
    case 'stage-healthy':
      return `:white_check_mark: ${at} is Healthy for this release.`;
    case 'release-complete':
      return `:tada: Release ${code(releaseDisplayName(record))} is complete: every stage was healthy.`;
    case 'mixed-stage':
      return mixedStageText(at, d.mixed, releaseDisplayName(record));
    case 'promotion-failed':
    case 'verification-failed':
      return kargoReplyBody(effect.kind, d, at);
  }
}

/**
 * A reply whose pause is over: the same text without its buttons, and a line saying how the
 * pause ended (Slack keeps the message; only its buttons go).
 */
export function renderSettledReply(effect: ThreadReplyEffect, record: ReleaseRecord, ended: PauseEnd): RenderedMessage {
  const message = renderReply(effect, record);
  const blocks: Block[] = [...message.blocks.filter((b) => b.type !== 'actions'), { type: 'context', elements: [{ type: 'mrkdwn', text: settledLine(ended) }] }];
  return { text: message.text, blocks: fitBlocks(blocks, { maxBlocks: MESSAGE_BLOCK_LIMIT, textBudget: MESSAGE_TEXT_BUDGET }) };
}

export function renderReply(effect: ThreadReplyEffect, record: ReleaseRecord): RenderedMessage {
  const text = body(effect, record);
  const blocks: Block[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (effect.kind === 'paused' && effect.target && effect.target.kind !== 'ApplicationSet' && effect.target.kind !== 'KargoStage') {
    const t = { ...effect.target, kind: effect.target.kind };
    blocks.push({
      type: 'actions',
      block_id: 'glidepath.approval',
      elements: approveAndAbort(
        {
          v: 1,
          p: record.pipeline,
          r: record.releaseId,
          ...(effect.stage !== undefined ? { st: effect.stage } : {}),
          k: t.kind,
          c: t.cluster,
          ns: t.namespace,
          n: t.name,
          ...(effect.detail.generation !== undefined ? { g: effect.detail.generation } : {}),
          ...(effect.detail.podHash !== undefined ? { h: effect.detail.podHash } : {}),
          ...(effect.detail.stepIndex !== undefined ? { s: effect.detail.stepIndex } : {}),
        },
        `${t.namespace}/${t.name}`,
      ),
    });
  }
  const promoteTo = effect.detail.promoteTo;
  if (effect.kind === 'stage-healthy' && effect.stage !== undefined && promoteTo !== undefined) {
    // The next stage is a Kargo Stage: one click promotes the Freight that just proved healthy.
    const freight = effect.detail.freight;
    blocks.push({
      type: 'actions',
      block_id: 'glidepath.promote',
      elements: [promoteButton({ v: 1, p: record.pipeline, r: record.releaseId, st: promoteTo, from: effect.stage, ...(freight ? { fr: freight } : {}) })],
    });
  }
  const fallback = text.split('\n')[0] ?? '';
  return {
    text: truncate(fallback, FALLBACK_TEXT_LIMIT),
    blocks: fitBlocks(blocks, { maxBlocks: MESSAGE_BLOCK_LIMIT, textBudget: MESSAGE_TEXT_BUDGET }),
  };
}
