/**
 * The Block Kit pieces the commands draw their own answers with. Button values come encoded
 * from src/slack/buttons.ts, the one home of every button value.
 */

import type { SectionBlock, ViewsOpenArguments } from '@slack/web-api';
export function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: text.length > 3000 ? `${text.slice(0, 2999)}…` : text } };
}

export function button(actionId: string, text: string, encodedValue: string, style?: 'primary' | 'danger'): Record<string, unknown> {
  return { type: 'button', action_id: actionId, text: { type: 'plain_text', text }, value: encodedValue, ...(style ? { style } : {}) };
}

export function actions(...elements: Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'actions', block_id: 'glidepath.command', elements };
}

/** A confirmation modal (abort, reject): its callback and metadata, title, submit label and Cancel. */
export function confirmModal(o: { callbackId: string; metadata: string; title: string; submit: string; blocks: unknown[] }): ViewsOpenArguments['view'] {
  return {
    type: 'modal',
    callback_id: o.callbackId,
    private_metadata: o.metadata,
    title: { type: 'plain_text', text: o.title },
    submit: { type: 'plain_text', text: o.submit },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: o.blocks as never,
  };
}
