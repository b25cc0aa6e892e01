/**
 * The subset of Block Kit Glidepath draws with, and Slack's size limits. Typed here rather than
 * imported so the renderer stays a pure module with no client dependency.
 */

/** Slack rejects a section text over 3,000 characters (`invalid_blocks`). */
export const SECTION_TEXT_LIMIT = 3000;
/** A message may carry at most 50 blocks; a Home tab view 100. */
export const MESSAGE_BLOCK_LIMIT = 50;
export const HOME_BLOCK_LIMIT = 100;
/** Header blocks take plain text up to 150 characters. */
export const HEADER_TEXT_LIMIT = 150;
/** Context elements take up to 2,000 characters each. */
export const CONTEXT_TEXT_LIMIT = 2000;
export const BUTTON_VALUE_LIMIT = 2000;
/**
 * Slack answers `msg_blocks_too_long` somewhere around 12k characters of text across all blocks
 * (undocumented, slackapi/bolt-js#2509); we stay well under it.
 */
export const MESSAGE_TEXT_BUDGET = 11_000;
/** The notification fallback `text` of a message. */
export const FALLBACK_TEXT_LIMIT = 300;

export interface TextObject {
  type: 'mrkdwn' | 'plain_text';
  text: string;
  emoji?: boolean;
}

export interface ButtonElement {
  type: 'button';
  action_id: string;
  text: { type: 'plain_text'; text: string; emoji?: boolean };
  value: string;
  style?: 'primary' | 'danger';
  confirm?: {
    title: { type: 'plain_text'; text: string };
    text: TextObject;
    confirm: { type: 'plain_text'; text: string };
    deny: { type: 'plain_text'; text: string };
    style?: 'primary' | 'danger';
  };
}

export type Block =
  | { type: 'header'; block_id?: string; text: { type: 'plain_text'; text: string; emoji?: boolean } }
  | { type: 'section'; block_id?: string; text: TextObject }
  | { type: 'context'; block_id?: string; elements: TextObject[] }
  | { type: 'divider'; block_id?: string }
  | { type: 'actions'; block_id?: string; elements: ButtonElement[] };

/** What chat.postMessage / chat.update receive: fallback text plus blocks. */
export interface RenderedMessage {
  text: string;
  blocks: Block[];
}

export interface HomeView {
  type: 'home';
  blocks: Block[];
}
