/**
 * Every value Glidepath puts on a Slack button (and the abort dialog's private_metadata): one zod
 * schema, one encoder and one decoder each, used by the renderer and the commands to draw and by
 * the listeners to read. A click is untrusted input (an old message, an edited payload), so a
 * value that does not decode is a refusal saying what to do instead; nothing is changed.
 * Each value names what it was shown for, so the command checks the cluster again at the click.
 * Pure: no Slack client, no I/O.
 */
import { z } from 'zod';
import { BUTTON_VALUE_LIMIT } from './render/blocks.js';

export const APPROVE_ACTION_ID = 'glidepath.approve';
export const ABORT_ACTION_ID = 'glidepath.abort';
export const PROMOTE_ACTION_ID = 'glidepath.promote';
export const REFRESH_APPROVE_ACTION_ID = 'glidepath.refresh-approve';
export const PROMOTE_CONFIRM_ACTION_ID = 'glidepath.promote-confirm';
export const ABORT_DIALOG_CALLBACK_ID = 'glidepath.abort-confirm';
export const REJECT_ACTION_ID = 'glidepath.reject';
export const REJECT_DIALOG_CALLBACK_ID = 'glidepath.reject-reason';
/** The reject dialog's reason input: its block and action ids (view.state.values[block][action]). */
export const REJECT_REASON_BLOCK_ID = 'glidepath.reject.reason';
export const REJECT_REASON_ACTION_ID = 'reason';

/** Slack refuses a view whose private_metadata is over 3,000 characters. */
export const PRIVATE_METADATA_LIMIT = 3000;

/** What a decoder gives: the typed value, or the sentence for the person who clicked. */
export type Decoded<T> = { kind: 'ok'; value: T } | { kind: 'refused'; reason: string };

/**
 * The Approve and Abort buttons of a "paused" reply (one value for both). Short keys: the value
 * is limited to 2,000 characters. p/r/st: pipeline, release id, stage; k/c/ns/n: the object;
 * g/h/s: the generation, pod hash and step index the button was rendered at.
 */
export const buttonValueSchema = z.object({
  v: z.literal(1),
  p: z.string(),
  r: z.string(),
  st: z.string().optional(),
  k: z.enum(['Rollout', 'Application']),
  c: z.string(),
  ns: z.string(),
  n: z.string(),
  g: z.number().int().optional(),
  h: z.string().optional(),
  s: z.number().int().optional(),
});
export type ButtonValue = z.infer<typeof buttonValueSchema>;

/**
 * The Promote button of a healthy stage: the downstream Kargo stage to promote to (st), the stage
 * that was healthy (from), and the Freight it was shown for (fr, a Kubernetes name), when known.
 */
export const promoteButtonSchema = z.object({ v: z.literal(1), p: z.string(), r: z.string(), st: z.string(), from: z.string(), fr: z.string().max(253).optional() });
export type PromoteButtonValue = z.infer<typeof promoteButtonSchema>;

/** Refresh-and-approve on a freshness refusal: the ApplicationSet, its step and the revision it was refused at. */
export const refreshApproveSchema = z.object({ v: z.literal(1), c: z.string(), ns: z.string(), n: z.string(), step: z.number().int(), rev: z.string() });
export type RefreshApproveValue = z.infer<typeof refreshApproveSchema>;

/** The confirmation of a promote by pattern or labels: the Stages the person was shown, chosen again at the click. */
export const promoteConfirmSchema = z.object({
  v: z.literal(1),
  c: z.string(),
  project: z.string(),
  p: z.string(),
  st: z.string(),
  stages: z.array(z.string()),
  freight: z.string().optional(),
  /** The Stage name in Kargo's stageSelector grammar (exact, glob:…, regex:…), ANDed with `sel`. */
  stage: z.string().optional(),
  /** Label selector. */
  sel: z.string().optional(),
  /** Buttons posted before `stage`: a glob without its `glob:` prefix. */
  glob: z.string().optional(),
});
export type PromoteConfirmValue = z.infer<typeof promoteConfirmSchema>;

/** The abort dialog's private_metadata: the Rollout and the version (h) the dialog named, and where to answer. */
export const abortDialogSchema = z.object({ c: z.string(), ns: z.string(), n: z.string(), h: z.string().optional(), channel: z.string(), r: z.string().optional() });
export type AbortDialogMetadata = z.infer<typeof abortDialogSchema>;

/** The reject dialog's private_metadata: the Rollout step the Reject button was shown for, and where to answer. */
export const rejectDialogSchema = z.object({ c: z.string(), ns: z.string(), n: z.string(), g: z.number().int(), h: z.string(), s: z.number().int(), channel: z.string() });
export type RejectDialogMetadata = z.infer<typeof rejectDialogSchema>;

/** The longest release id a button keeps when the whole value would not fit (names are bounded; release ids are free-form). */
const RELEASE_ID_KEPT = 200;

/**
 * A value with a release id as JSON, the release id cut to 200 characters when the whole is over
 * the limit: the rest identifies the target. Every other field is a configured or Kubernetes name
 * (63 or 253 characters at most), so a value still over the limit is a bug, not input.
 */
function encodeWithRelease<V extends { r: string }>(value: V, what: string): string {
  const json = JSON.stringify(value);
  if (json.length <= BUTTON_VALUE_LIMIT) return json;
  const shortened = JSON.stringify({ ...value, r: value.r.slice(0, RELEASE_ID_KEPT) });
  if (shortened.length <= BUTTON_VALUE_LIMIT) return shortened;
  throw new Error(`${what} is over ${BUTTON_VALUE_LIMIT} characters`);
}

/** The value as JSON, or undefined when it does not fit in `limit` (then the caller shows no button). */
function encodeWithin(value: unknown, limit: number): string | undefined {
  const json = JSON.stringify(value);
  return json.length <= limit ? json : undefined;
}

export function encodeButtonValue(value: ButtonValue): string {
  return encodeWithRelease(value, `button value for ${value.c}/${value.ns}/${value.n}`);
}

export function encodePromoteButton(value: PromoteButtonValue): string {
  return encodeWithRelease(value, `Promote button value for ${value.p}@${value.st}`);
}

/** Undefined when a (free-form) revision makes it too long for a button. */
export function encodeRefreshApprove(value: RefreshApproveValue): string | undefined {
  return encodeWithin(value, BUTTON_VALUE_LIMIT);
}

/** Undefined when the Stages, selector or glob make it too long for a button: the person is asked to narrow the choice. */
export function encodePromoteConfirm(value: PromoteConfirmValue): string | undefined {
  return encodeWithin(value, BUTTON_VALUE_LIMIT);
}

export function encodeAbortDialog(value: AbortDialogMetadata): string {
  const json = encodeWithin(value, PRIVATE_METADATA_LIMIT);
  if (json === undefined) throw new Error(`abort dialog metadata for ${value.c}/${value.ns}/${value.n} is over ${PRIVATE_METADATA_LIMIT} characters`);
  return json;
}

export function encodeRejectDialog(value: RejectDialogMetadata): string {
  const json = encodeWithin(value, PRIVATE_METADATA_LIMIT);
  if (json === undefined) throw new Error(`reject dialog metadata for ${value.c}/${value.ns}/${value.n} is over ${PRIVATE_METADATA_LIMIT} characters`);
  return json;
}

function decode<T>(schema: z.ZodType<T>, raw: string | undefined, refusal: string, accept: (value: T) => boolean = () => true): Decoded<T> {
  let json: unknown;
  try {
    json = JSON.parse(raw ?? '');
  } catch {
    return { kind: 'refused', reason: refusal };
  }
  const parsed = schema.safeParse(json);
  return parsed.success && accept(parsed.data) ? { kind: 'ok', value: parsed.data } : { kind: 'refused', reason: refusal };
}

/** An Approve value that names a Rollout step: the object and the generation, pod hash and step it was shown at. */
export type ApproveClick = ButtonValue & { k: 'Rollout'; g: number; h: string; s: number };

export function decodeApproveClick(raw: string | undefined): Decoded<ApproveClick> {
  return decode(
    buttonValueSchema,
    raw,
    ':x: This button does not name a Rollout step Glidepath can approve; nothing was changed. Use `/glidepath approve &lt;cluster/namespace/rollout&gt;`.',
    (v) => v.k === 'Rollout' && v.g !== undefined && v.h !== undefined && v.s !== undefined,
  ) as Decoded<ApproveClick>;
}

export function decodeAbortClick(raw: string | undefined): Decoded<ButtonValue> {
  return decode(buttonValueSchema, raw, ':x: This button does not name a Rollout; nothing was changed. Use `/glidepath abort &lt;cluster/namespace/rollout&gt;`.', (v) => v.k === 'Rollout');
}

export function decodePromoteClick(raw: string | undefined): Decoded<PromoteButtonValue> {
  return decode(promoteButtonSchema, raw, ':x: This button names no configured stage to promote to; nothing was changed. Use `/glidepath promote &lt;pipeline@stage&gt;`.');
}

/** What a Refresh-and-approve click is told when its value names no ApplicationSet of a configured stage. */
export const NOT_AN_APPSET_BUTTON = ':x: This button does not name an ApplicationSet of a configured stage; nothing was changed. Use `/glidepath approve &lt;cluster/namespace/appset&gt;`.';

export function decodeRefreshApproveClick(raw: string | undefined): Decoded<RefreshApproveValue> {
  return decode(refreshApproveSchema, raw, NOT_AN_APPSET_BUTTON);
}

export function decodePromoteConfirmClick(raw: string | undefined): Decoded<PromoteConfirmValue> {
  return decode(promoteConfirmSchema, raw, ':x: This button does not name Stages to promote; nothing was changed. Run `/glidepath promote` with --stage or --selector again.');
}

/** The dialog's metadata is Glidepath's own; a bad one has no channel to answer in (the listener logs it). */
export function decodeAbortDialog(raw: string | undefined): Decoded<AbortDialogMetadata> {
  return decode(abortDialogSchema, raw, 'the abort dialog was submitted without usable metadata');
}

/** A Reject click names a Rollout step as an Approve click does (the same value is on both buttons). */
export function decodeRejectClick(raw: string | undefined): Decoded<ApproveClick> {
  const decoded = decodeApproveClick(raw);
  return decoded.kind === 'ok' ? decoded : { kind: 'refused', reason: ':x: This button does not name a Rollout step Glidepath can hold; nothing was changed. Use `/glidepath reject &lt;cluster/namespace/rollout&gt; &lt;reason&gt;`.' };
}

export function decodeRejectDialog(raw: string | undefined): Decoded<RejectDialogMetadata> {
  return decode(rejectDialogSchema, raw, 'the reject dialog was submitted without usable metadata');
}
