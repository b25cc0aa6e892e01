/**
 * Approve and Abort buttons. Each carries what it was rendered for (object, generation, pod hash,
 * step), so a click on a button whose Rollout has moved on can be refused with what changed.
 */
import type { TargetRef } from '../../facts/fact.js';
import { BUTTON_VALUE_LIMIT, type ButtonElement } from './blocks.js';

export const APPROVE_ACTION_ID = 'glidepath.approve';
export const ABORT_ACTION_ID = 'glidepath.abort';

/** The parsed value of an Approve or Abort button. Short keys: the value is limited to 2,000 chars. */
export interface ButtonValue {
  v: 1;
  /** pipeline, release id, stage */
  p: string;
  r: string;
  st?: string;
  /** the object */
  k: TargetRef['kind'];
  c: string;
  ns: string;
  n: string;
  /** generation, pod hash, step index the button was rendered at */
  g?: number;
  h?: string;
  s?: number;
}

/**
 * A button value as JSON, with the release id cut to 200 characters when the whole is over the
 * limit: only the release id is free-form enough to overflow, and the rest identifies the target.
 * `tooLong` says what a value still over the limit is; without it, the shortened value is returned as is.
 */
function encodeValue<V extends { r: string }>(value: V, tooLong?: (value: V) => string): string {
  const json = JSON.stringify(value);
  if (json.length <= BUTTON_VALUE_LIMIT) return json;
  const withoutRelease = JSON.stringify({ ...value, r: value.r.slice(0, 200) });
  if (withoutRelease.length <= BUTTON_VALUE_LIMIT || !tooLong) return withoutRelease;
  throw new Error(`${tooLong(value)} is over ${BUTTON_VALUE_LIMIT} characters`);
}

export function encodeButtonValue(value: ButtonValue): string {
  return encodeValue(value, (v) => `button value for ${v.c}/${v.ns}/${v.n}`);
}

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

export const PROMOTE_ACTION_ID = 'glidepath.promote';

/** The Promote button of a healthy stage: the downstream stage to promote to, and the stage that was healthy. */
export interface PromoteButtonValue {
  v: 1;
  p: string;
  r: string;
  /** downstream stage */
  st: string;
  /** the healthy stage */
  from: string;
}

export function promoteButton(value: PromoteButtonValue): ButtonElement {
  return {
    type: 'button',
    action_id: PROMOTE_ACTION_ID,
    text: { type: 'plain_text', text: `Promote to ${value.st}`.slice(0, 75) },
    value: encodeValue(value),
  };
}
