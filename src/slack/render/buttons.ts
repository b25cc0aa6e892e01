/**
 * Approve, Reject and Abort buttons, and the Promote button of a healthy stage. Their values (what each
 * was rendered for) are encoded by src/slack/buttons.ts, the one home of every button value.
 */
import { ABORT_ACTION_ID, APPROVE_ACTION_ID, REJECT_ACTION_ID, encodeButtonValue, encodePromoteButton, PROMOTE_ACTION_ID, type ButtonValue, type PromoteButtonValue } from '../buttons.js';
import type { ButtonElement } from './blocks.js';

export function approveAndAbort(value: ButtonValue, label: string): ButtonElement[] {
  const encoded = encodeButtonValue(value);
  return [
    {
      type: 'button',
      action_id: APPROVE_ACTION_ID,
      text: { type: 'plain_text', text: 'Approve' },
      style: 'primary',
      value: encoded,
    },
    {
      // Holds the step with a reason (a dialog asks for it); nothing is changed in the cluster.
      type: 'button',
      action_id: REJECT_ACTION_ID,
      text: { type: 'plain_text', text: 'Reject' },
      value: encoded,
    },
    {
      type: 'button',
      action_id: ABORT_ACTION_ID,
      text: { type: 'plain_text', text: 'Abort' },
      style: 'danger',
      value: encoded,
      confirm: {
        title: { type: 'plain_text', text: 'Abort the rollout?' },
        text: { type: 'plain_text', text: `Abort ${label.slice(0, 200)}: traffic goes back to the stable version.` },
        confirm: { type: 'plain_text', text: 'Abort' },
        deny: { type: 'plain_text', text: 'Cancel' },
        style: 'danger',
      },
    },
  ];
}

export function promoteButton(value: PromoteButtonValue): ButtonElement {
  return {
    type: 'button',
    action_id: PROMOTE_ACTION_ID,
    text: { type: 'plain_text', text: `Promote to ${value.st}`.slice(0, 75) },
    value: encodePromoteButton(value),
  };
}
