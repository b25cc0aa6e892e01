/**
 * Makes any list of blocks acceptable to Slack: per-field limits, a block count, and a total text
 * budget. Whatever is cut says so ("… (truncated)"), so a reader knows there is more.
 */
import {
  CONTEXT_TEXT_LIMIT,
  HEADER_TEXT_LIMIT,
  SECTION_TEXT_LIMIT,
  type Block,
  type TextObject,
} from './blocks.js';
import { TRUNCATED, truncate } from '../../text/mrkdwn.js';

export interface FitOptions {
  maxBlocks: number;
  /** Total characters of text across all blocks. */
  textBudget: number;
}

/** The smallest a text is cut down to when the total budget is short. */
const MIN_TEXT = 120;

function texts(block: Block): TextObject[] {
  switch (block.type) {
    case 'header':
      return [block.text as TextObject];
    case 'section':
      return [block.text];
    case 'context':
      return block.elements;
    case 'actions':
      return block.elements.map((b) => b.text as TextObject);
    case 'divider':
      return [];
  }
}

function boundFields(block: Block): Block {
  switch (block.type) {
    case 'header':
      return { ...block, text: { ...block.text, text: truncate(block.text.text, HEADER_TEXT_LIMIT) } };
    case 'section':
      return { ...block, text: { ...block.text, text: truncate(block.text.text, SECTION_TEXT_LIMIT) } };
    case 'context':
      return {
        ...block,
        elements: block.elements.slice(0, 10).map((e) => ({ ...e, text: truncate(e.text, CONTEXT_TEXT_LIMIT) })),
      };
    default:
      return block;
  }
}

export function totalText(blocks: readonly Block[]): number {
  let n = 0;
  for (const b of blocks) for (const t of texts(b)) n += t.text.length;
  return n;
}

export function fitBlocks(input: readonly Block[], options: FitOptions): Block[] {
  let blocks = structuredClone(input as Block[]).map(boundFields);
  if (blocks.length > options.maxBlocks) {
    const dropped = blocks.length - (options.maxBlocks - 1);
    blocks = [
      ...blocks.slice(0, options.maxBlocks - 1),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${TRUNCATED}: ${dropped} more blocks not shown` }] },
    ];
  }
  // Shorten the longest texts first: one huge Rollout message should not push out every stage row.
  let excess = totalText(blocks) - options.textBudget;
  while (excess > 0) {
    let longest: TextObject | undefined;
    for (const b of blocks) {
      for (const t of texts(b)) if (longest === undefined || t.text.length > longest.text.length) longest = t;
    }
    if (longest === undefined || longest.text.length <= MIN_TEXT) break;
    const target = Math.max(MIN_TEXT, longest.text.length - excess);
    const before = longest.text.length;
    longest.text = truncate(longest.text, target);
    excess -= before - longest.text.length;
  }
  // Still too long (many blocks at the minimum): drop blocks from the end, keeping a marker.
  while (totalText(blocks) > options.textBudget && blocks.length > 2) {
    blocks.splice(blocks.length - 2, 1);
    const last = blocks[blocks.length - 1];
    if (last?.type !== 'context' || !last.elements[0]?.text.startsWith(TRUNCATED)) {
      blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `${TRUNCATED}: more not shown` }] });
    }
  }
  return blocks;
}
