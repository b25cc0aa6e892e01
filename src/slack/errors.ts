/** Slack-side failures a person must act on, with the fix in the message. */
import { ErrorCode } from '@slack/web-api';
import { StartupError } from '../config/errors.js';
import { networkCode } from '../kube/errors.js';

export type SlackErrorCode = 'glidepath_slack_not_configured' | 'glidepath_slack_auth_failed' | 'glidepath_slack_unreachable';

export class SlackStartupError extends StartupError {
  override readonly name = 'SlackStartupError';
  constructor(
    readonly code: SlackErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Slack platform errors that no retry will fix: the configuration must change. */
export const PERMANENT_SLACK_ERRORS: Record<string, string> = {
  channel_not_found: 'the channel does not exist or the bot cannot see it; check the pipeline channel id',
  not_in_channel: 'the bot is not a member of the channel; invite it with /invite @glidepath',
  is_archived: 'the channel is archived; unarchive it or point the pipeline at another channel',
  invalid_auth: 'SLACK_BOT_TOKEN is not valid; reinstall the app and update the token',
  not_authed: 'no SLACK_BOT_TOKEN was sent',
  account_inactive: 'the bot token belongs to a deactivated app or user; reinstall the app',
  token_revoked: 'the bot token was revoked; reinstall the app and update SLACK_BOT_TOKEN',
  missing_scope: 'the app lacks a scope it needs; compare its scopes with deploy/slack/manifest.yaml',
  invalid_blocks: 'Slack rejected the message blocks (a renderer bug; please report it)',
  msg_blocks_too_long: 'Slack rejected the message as too long (a renderer bug; please report it)',
  thread_not_found: 'the thread parent was deleted in Slack',
};

/** What a failed Web API call was: nothing answered, Slack said no (`ok: false`), or an HTTP error. */
export type SlackCallFailure = { kind: 'unreachable'; detail: string } | { kind: 'rejected'; error: string; needed?: string } | { kind: 'http'; status: number };

export function slackCallFailure(err: unknown): SlackCallFailure {
  const e = err as { code?: string; data?: { error?: string; needed?: string }; original?: { code?: string; message?: string }; statusCode?: number; message?: string };
  if (e.code === ErrorCode.PlatformError) return { kind: 'rejected', error: e.data?.error ?? 'unknown', ...(e.data?.needed ? { needed: e.data.needed } : {}) };
  if (e.code === ErrorCode.HTTPError) return { kind: 'http', status: e.statusCode ?? 0 };
  // web-api 8 calls through fetch: the system error (ECONNREFUSED, ENOTFOUND) is the cause of its `original`.
  if (e.code === ErrorCode.RequestError) return { kind: 'unreachable', detail: networkCode(e.original) ?? e.original?.message ?? 'request failed' };
  // Retried to the end, the client throws fetch's own TypeError ("fetch failed"): its cause says why.
  return { kind: 'unreachable', detail: networkCode(err) ?? e.message ?? String(err) };
}

/** A refusal in a person's words: the error, the scope it needs, and the fix when one is known. */
export function explainSlackFailure(f: Exclude<SlackCallFailure, { kind: 'unreachable' }>): string {
  if (f.kind === 'http') return `HTTP ${f.status}`;
  const why = PERMANENT_SLACK_ERRORS[f.error];
  const scope = f.needed ? ` (needs ${f.needed})` : '';
  return why ? `${f.error}${scope}: ${why}` : `${f.error}${scope}`;
}
