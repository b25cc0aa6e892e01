/**
 * A reply posted after the thread showed the release's end, about something that happened before
 * it (src/slack/writer/late-reply.ts decides which). Pure: the time is the record's, not the clock.
 * It says when it happened and which end it came before, first, so it never reads as news after
 * "complete"; its buttons go, since whatever it asked about was settled by the end.
 */
import type { ReleaseStatus } from '../../releases/record/record.js';
import { FALLBACK_TEXT_LIMIT, MESSAGE_BLOCK_LIMIT, MESSAGE_TEXT_BUDGET, type Block, type RenderedMessage } from './blocks.js';
import { fitBlocks } from './fit.js';
import { slackDate, truncate } from '../../text/mrkdwn.js';

const ENDED: Partial<Record<ReleaseStatus, string>> = {
  Complete: 'completed',
  Failed: 'failed',
  Aborted: 'was aborted',
  Superseded: 'was superseded',
};

export function lateLine(late: { at: number; before: ReleaseStatus }): string {
  return `:hourglass: Posted late: this happened earlier, at ${slackDate(late.at)}, before the release ${ENDED[late.before] ?? `was ${late.before}`}.`;
}

export function markLate(message: RenderedMessage, late: { at: number; before: ReleaseStatus } | undefined): RenderedMessage {
  if (!late) return message;
  const line = lateLine(late);
  const blocks: Block[] = [{ type: 'context', elements: [{ type: 'mrkdwn', text: line }] }, ...message.blocks.filter((b) => b.type !== 'actions')];
  // Fitted again: the line is one more block and more text than the reply was fitted to.
  return {
    text: truncate(`(Earlier, before the release ${ENDED[late.before] ?? `was ${late.before}`}) ${message.text}`, FALLBACK_TEXT_LIMIT),
    blocks: fitBlocks(blocks, { maxBlocks: MESSAGE_BLOCK_LIMIT, textBudget: MESSAGE_TEXT_BUDGET }),
  };
}
