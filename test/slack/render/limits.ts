/** Assertions every rendered message must pass, whatever the input. */
import { expect } from 'vitest';
import {
  BUTTON_VALUE_LIMIT,
  HEADER_TEXT_LIMIT,
  MESSAGE_BLOCK_LIMIT,
  MESSAGE_TEXT_BUDGET,
  SECTION_TEXT_LIMIT,
  type Block,
} from '../../../src/slack/render/blocks.js';
import { totalText } from '../../../src/slack/render/fit.js';
import { checkMessage } from '../../../sandbox/slack/validate-blocks.js';

/**
 * The renderer's own limits, and the stand-in's independent checker (validate-blocks.ts), which
 * counts text its own way: a renderer miscount that the first would share, the second catches.
 */
export function expectWithinSlackLimits(blocks: Block[], text?: string): void {
  expect(checkMessage(text, blocks)).toBeUndefined();
  expect(blocks.length).toBeLessThanOrEqual(MESSAGE_BLOCK_LIMIT);
  expect(totalText(blocks)).toBeLessThanOrEqual(MESSAGE_TEXT_BUDGET);
  for (const b of blocks) {
    if (b.type === 'section') expect(b.text.text.length).toBeLessThanOrEqual(SECTION_TEXT_LIMIT);
    if (b.type === 'header') expect(b.text.text.length).toBeLessThanOrEqual(HEADER_TEXT_LIMIT);
    if (b.type === 'actions') for (const e of b.elements) expect(e.value.length).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
  }
}

/**
 * No mention, broadcast or link that the input smuggled in survives in mrkdwn text. Plain-text
 * objects (headers, button labels) are never parsed for mentions by Slack, so they are not checked.
 */
export function expectNoPings(blocks: Block[], ours: string[] = []): void {
  const mrkdwn: string[] = [];
  for (const b of blocks) {
    if (b.type === 'section' && b.text.type === 'mrkdwn') mrkdwn.push(b.text.text);
    if (b.type === 'context') for (const e of b.elements) if (e.type === 'mrkdwn') mrkdwn.push(e.text);
  }
  let json = mrkdwn.join('\n');
  for (const token of ours) json = json.split(token).join('');
  for (const ping of ['<!channel', '<!here', '<!everyone', '<@U', '<!subteam', '<#C', '<http://evil']) {
    expect(json).not.toContain(ping);
  }
}
