/**
 * How the sandbox's Glidepath hears from Slack: `SANDBOX_SLACK=http` (the default) sends signed
 * requests to Glidepath's /slack/events, as Slack does for an app with Request URLs;
 * `SANDBOX_SLACK=socket` sets SLACK_APP_TOKEN, so Glidepath runs Bolt's Socket Mode receiver, opens
 * its socket through the stand-in's apps.connections.open and gets clicks and commands as envelopes.
 * The sandbox acts through `slackSenderFor`, the same either way.
 */
import type { BlockActionInput, SlashCommandInput, ViewSubmissionInput } from './payloads.js';
import { SignedSender } from './sender.js';
import type { SlackStandIn } from './server.js';
import { STAND_IN_APP_TOKEN } from './socket-mode.js';

export type SandboxSlackMode = 'http' | 'socket';

export function sandboxSlackMode(value: string | undefined): SandboxSlackMode {
  if (value === undefined || value === '' || value === 'http') return 'http';
  if (value === 'socket') return 'socket';
  throw new Error(`SANDBOX_SLACK=${value} is not a Slack mode: use SANDBOX_SLACK=http (signed requests to /slack/events, the default) or SANDBOX_SLACK=socket (Socket Mode)`);
}

/** What Glidepath's environment adds for the mode: the app-level token turns Socket Mode on. */
export function slackModeEnv(mode: SandboxSlackMode): Record<string, string> {
  return mode === 'socket' ? { SLACK_APP_TOKEN: STAND_IN_APP_TOKEN } : {};
}

/** A person's slash commands, clicks and dialog submits, delivered the way the mode says; each resolves once Glidepath acked it. */
export interface SandboxSlackSender {
  slashCommand(input: SlashCommandInput): Promise<void>;
  blockAction(input: BlockActionInput): Promise<void>;
  viewSubmission(input: ViewSubmissionInput): Promise<void>;
}

export function slackSenderFor(mode: SandboxSlackMode, o: { glidepathUrl: string; signingSecret: string; slack: SlackStandIn }): SandboxSlackSender {
  if (mode === 'socket') {
    const socket = o.slack.socketMode;
    return {
      slashCommand: async (input) => void (await socket.slashCommand(input)),
      blockAction: async (input) => void (await socket.blockAction(input)),
      viewSubmission: async (input) => void (await socket.viewSubmission(input)),
    };
  }
  const signed = new SignedSender({ url: `${o.glidepathUrl}/slack/events`, signingSecret: o.signingSecret });
  const ok = async (what: string, sent: Promise<{ status: number; body: string }>): Promise<void> => {
    const res = await sent;
    if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${res.body}`);
  };
  return {
    slashCommand: (input) => ok(input.command, signed.slashCommand(input)),
    blockAction: (input) => ok(input.actionId, signed.blockAction(input)),
    viewSubmission: (input) => ok('the dialog', signed.viewSubmission(input)),
  };
}
