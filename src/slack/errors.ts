/** Slack-side failures a person must act on, with the fix in the message. */

export type SlackErrorCode = 'glidepath_slack_not_configured' | 'glidepath_slack_auth_failed';

export class SlackStartupError extends Error {
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
