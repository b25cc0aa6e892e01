/**
 * Sends requests to the bot as Slack does: slash commands (form-encoded), block_actions
 * (`payload=<json>`) and Events API callbacks (JSON), each signed with the v0 HMAC scheme
 * (`v0:<timestamp>:<raw body>`, https://api.slack.com/authentication/verifying-requests-from-slack).
 * The payloads themselves are payloads.ts's, shared with Socket Mode.
 */
import { createHmac } from 'node:crypto';
import { blockActionPayload, eventCallbackPayload, slashCommandPayload, viewSubmissionPayload, type BlockActionInput, type PayloadTeam, type SlashCommandInput, type ViewSubmissionInput } from './payloads.js';

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

  private get payloadTeam(): PayloadTeam {
    return { teamId: this.team, ...(this.options.apiAppId ? { apiAppId: this.options.apiAppId } : {}) };
  }

  slashCommand(input: SlashCommandInput, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const form = new URLSearchParams(slashCommandPayload(input, this.payloadTeam));
    return this.post(form.toString(), 'application/x-www-form-urlencoded', override);
  }

  blockAction(input: BlockActionInput, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    const body = new URLSearchParams({ payload: JSON.stringify(blockActionPayload(input, this.payloadTeam)) }).toString();
    return this.post(body, 'application/x-www-form-urlencoded', override);
  }

  /** A modal's submit (view_submission) with the view as it was opened (callback_id, private_metadata). */
  viewSubmission(input: ViewSubmissionInput, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    return this.post(new URLSearchParams({ payload: JSON.stringify(viewSubmissionPayload(input, this.payloadTeam)) }).toString(), 'application/x-www-form-urlencoded', override);
  }

  event(event: Record<string, unknown>, override?: { timestamp?: number; secret?: string }): Promise<SentResponse> {
    return this.post(JSON.stringify(eventCallbackPayload(event, this.payloadTeam)), 'application/json', override);
  }
}
