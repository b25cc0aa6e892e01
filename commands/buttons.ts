/**
 * Buttons the commands add to their own answers. Like the renderer's, each value names what it
 * was shown for, so a click on an old message is checked against the cluster again.
 */
import type { SectionBlock } from '@slack/web-api';
import { z } from 'zod';

export const REFRESH_APPROVE_ACTION_ID = 'glidepath.refresh-approve';
export const PROMOTE_CONFIRM_ACTION_ID = 'glidepath.promote-confirm';
export const ABORT_DIALOG_CALLBACK_ID = 'glidepath.abort-confirm';

export const refreshApproveValue = z.object({ v: z.literal(1), c: z.string(), ns: z.string(), n: z.string(), step: z.number().int(), rev: z.string() });
export type RefreshApproveValue = z.infer<typeof refreshApproveValue>;

export const promoteConfirmValue = z.object({ v: z.literal(1), c: z.string(), project: z.string(), p: z.string(), st: z.string(), stages: z.array(z.string()), freight: z.string().optional(), sel: z.string().optional(), glob: z.string().optional() });
export type PromoteConfirmValue = z.infer<typeof promoteConfirmValue>;

export const abortDialogMetadata = z.object({ c: z.string(), ns: z.string(), n: z.string(), h: z.string().optional(), channel: z.string(), r: z.string().optional() });
export type AbortDialogMetadata = z.infer<typeof abortDialogMetadata>;

export function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: text.length > 3000 ? `${text.slice(0, 2999)}…` : text } };
}

export function button(actionId: string, text: string, value: unknown, style?: 'primary' | 'danger'): Record<string, unknown> {
  return { type: 'button', action_id: actionId, text: { type: 'plain_text', text }, value: JSON.stringify(value), ...(style ? { style } : {}) };
}

export function actions(...elements: Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'actions', block_id: 'glidepath.command', elements };
}

/** Parses a button value with its schema; undefined when it is not one of ours. */
export function parseValue<T>(schema: z.ZodType<T>, raw: string | undefined): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(raw ?? ''));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
