/**
 * What Slack sends an app for a slash command, a button click, a modal's submit and an Events API
 * event, built once for both ways Slack delivers them: signed HTTP requests (sender.ts) and Socket
 * Mode envelopes (socket-mode.ts). Over HTTP a slash command is these fields form-encoded and an
 * interaction is `payload=<json>`; over Socket Mode both are the envelope's JSON `payload`.
 */

export interface PayloadTeam {
  teamId?: string;
  apiAppId?: string;
}

export interface SlashCommandInput {
  command: string;
  text: string;
  userId: string;
  channelId: string;
  responseUrl: string;
  triggerId?: string;
}

export interface BlockActionInput {
  actionId: string;
  value: string;
  userId: string;
  channelId: string;
  messageTs: string;
  threadTs?: string;
  responseUrl: string;
  blockId?: string;
  messageText?: string;
  messageBlocks?: unknown[];
  ephemeral?: boolean;
  triggerId?: string;
}

export interface ViewSubmissionInput {
  userId: string;
  view: Record<string, unknown>;
}

const team = (t: PayloadTeam): string => t.teamId ?? 'T0STANDIN';
const appId = (t: PayloadTeam): string => t.apiAppId ?? 'A0GLIDEPATH';

export function slashCommandPayload(input: SlashCommandInput, t: PayloadTeam = {}): Record<string, string> {
  return {
    token: 'deprecated-verification-token',
    team_id: team(t),
    team_domain: 'stand-in',
    channel_id: input.channelId,
    channel_name: input.channelId.toLowerCase(),
    user_id: input.userId,
    user_name: input.userId.toLowerCase(),
    command: input.command,
    text: input.text,
    api_app_id: appId(t),
    response_url: input.responseUrl,
    trigger_id: input.triggerId ?? `trigger-${Date.now()}`,
  };
}

export function blockActionPayload(input: BlockActionInput, t: PayloadTeam = {}): Record<string, unknown> {
  return {
    type: 'block_actions',
    team: { id: team(t), domain: 'stand-in' },
    user: { id: input.userId, username: input.userId.toLowerCase(), team_id: team(t) },
    api_app_id: appId(t),
    token: 'deprecated-verification-token',
    container: { type: 'message', message_ts: input.messageTs, channel_id: input.channelId, is_ephemeral: input.ephemeral ?? false },
    trigger_id: input.triggerId ?? `trigger-${Date.now()}`,
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
}

/** A modal's submit (view_submission) with the view as it was opened (callback_id, private_metadata). */
export function viewSubmissionPayload(input: ViewSubmissionInput, t: PayloadTeam = {}): Record<string, unknown> {
  return {
    type: 'view_submission',
    team: { id: team(t), domain: 'stand-in' },
    user: { id: input.userId, username: input.userId.toLowerCase(), name: input.userId.toLowerCase(), team_id: team(t) },
    api_app_id: appId(t),
    token: 'deprecated-verification-token',
    trigger_id: `trigger-${Date.now()}`,
    view: { id: 'V0STANDIN', team_id: team(t), state: { values: {} }, hash: 'h', ...input.view },
    response_urls: [],
  };
}

/** An Events API callback around `event` (app_home_opened, message, …). */
export function eventCallbackPayload(event: Record<string, unknown>, t: PayloadTeam = {}): Record<string, unknown> {
  return {
    token: 'deprecated-verification-token',
    team_id: team(t),
    api_app_id: appId(t),
    type: 'event_callback',
    event_id: `Ev${Date.now()}`,
    event_time: Math.floor(Date.now() / 1000),
    event,
  };
}
