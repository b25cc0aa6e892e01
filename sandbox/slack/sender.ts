/**
 * Sends requests to the bot as Slack does: slash commands (form-encoded), block_actions
 * (`payload=<json>`) and Events API callbacks (JSON), each signed with the v0 HMAC scheme
 * (`v0:<timestamp>:<raw body>`, https://api.slack.com/authentication/verifying-requests-from-slack).
 */
import { createHmac } from 'node:crypto';

export interface SignedSenderOptions {
  /** The bot's events URL, e.g. http://127.0.0.1:3000/slack/events. */
  url: string;
  signingSecret: string;
  teamId?: string;
  apiAppId?: string;
  /** Seconds; an injectable clock for replay-window tests. */
  nowSeconds?: () => number;
}

export interface SentResponse {
  status: number;
  body: string;
}

export function signature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export class SignedSender {
  constructor(private readonly options: SignedSenderOptions) {}

  private get team(): string {
    return this.options.teamId ?? 'T0STANDIN';
  }

  async post(body: string, contentType: string, override: { timestamp?: number; secret?: string } = {}): Promise<SentResponse> {
    const timestamp = override.timestamp ?? (this.options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))();
    const res = await fetch(this.options.url, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': signature(override.secret ?? this.options.signingSecret, timestamp, body),
      },
      body,
    });
    return { status: res.status, body: await res.text() };
  }

  slashCommand(input: { command: string; text: string; userId: string; channelId: string; responseUrl: string; triggerId?: string }, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const form = new URLSearchParams({
      token: 'deprecated-verification-token',
      team_id: this.team,
      team_domain: 'stand-in',
      channel_id: input.channelId,
      channel_name: input.channelId.toLowerCase(),
      user_id: input.userId,
      user_name: input.userId.toLowerCase(),
      command: input.command,
      text: input.text,
      api_app_id: this.options.apiAppId ?? 'A0GLIDEPATH',
      response_url: input.responseUrl,
      trigger_id: input.triggerId ?? `trigger-${Date.now()}`,
    });
    return this.post(form.toString(), 'application/x-www-form-urlencoded', override);
  }

  blockAction(input: { actionId: string; value: string; userId: string; channelId: string; messageTs: string; threadTs?: string; responseUrl: string; blockId?: string; messageText?: string; messageBlocks?: unknown[]; ephemeral?: boolean }, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const payload = {
      type: 'block_actions',
      team: { id: this.team, domain: 'stand-in' },
      user: { id: input.userId, username: input.userId.toLowerCase(), team_id: this.team },
      api_app_id: this.options.apiAppId ?? 'A0GLIDEPATH',
      token: 'deprecated-verification-token',
      container: { type: 'message', message_ts: input.messageTs, channel_id: input.channelId, is_ephemeral: input.ephemeral ?? false },
      trigger_id: `trigger-${Date.now()}`,
      channel: { id: input.channelId, name: input.channelId.toLowerCase() },
      message: {
        type: 'message',
        ts: input.messageTs,
        ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
        ...(input.messageText !== undefined ? { text: input.messageText } : {}),
        ...(input.messageBlocks ? { blocks: input.messageBlocks } : {}),
      },
      response_url: input.responseUrl,
      actions: [
        {
          type: 'button',
          action_id: input.actionId,
          block_id: input.blockId ?? 'glidepath.approval',
          value: input.value,
          text: { type: 'plain_text', text: input.actionId },
          action_ts: `${Math.floor(Date.now() / 1000)}.000100`,
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return this.post(body, 'application/x-www-form-urlencoded', override);
  }

  /** A modal's submit (view_submission) with the view as it was opened (callback_id, private_metadata). */
  viewSubmission(input: { userId: string; view: Record<string, unknown> }, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const payload = {
      type: 'view_submission',
      team: { id: this.team, domain: 'stand-in' },
      user: { id: input.userId, username: input.userId.toLowerCase(), name: input.userId.toLowerCase(), team_id: this.team },
      api_app_id: this.options.apiAppId ?? 'A0GLIDEPATH',
      token: 'deprecated-verification-token',
      trigger_id: `trigger-${Date.now()}`,
      view: { id: 'V0STANDIN', team_id: this.team, state: { values: {} }, hash: 'h', ...input.view },
      response_urls: [],
    };
    return this.post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded', override);
  }

  event(event: Record<string, unknown>, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const body = JSON.stringify({
      token: 'deprecated-verification-token',
      team_id: this.team,
      api_app_id: this.options.apiAppId ?? 'A0GLIDEPATH',
      type: 'event_callback',
      event_id: `Ev${Date.now()}`,
      event_time: Math.floor(Date.now() / 1000),
      event,
    });
    return this.post(body, 'application/json', override);
  }
}
