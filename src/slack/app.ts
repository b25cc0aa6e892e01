/**
 * The Bolt app: Socket Mode when SLACK_APP_TOKEN is set, otherwise HTTP mode on Glidepath's own
 * server (`handleSlackRequest` is mounted on /slack/events). The bot token is checked with
 * auth.test before anything else, so a bad token stops start-up with a message that says what to do.
 */
import { App, type Receiver } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Env } from '../config/env.js';
import { createSlackClient, slackClientOptions } from './client.js';
import { explainSlackFailure, slackCallFailure, SlackStartupError } from './errors.js';
import { LISTENER_GROUPS } from './listeners/index.js';
import type { ListenerDeps, ListenerGroup } from './listeners/types.js';
import { boltLogger } from './logger.js';
import { GuardedSocketModeReceiver } from './receivers/guarded-socket-mode-receiver.js';
import { RoutedHttpReceiver } from './receivers/routed-http-receiver.js';
import type { SeenSlackRequests } from './receivers/seen-requests.js';

export type SlackEnv = Pick<Env, 'SLACK_BOT_TOKEN' | 'SLACK_SIGNING_SECRET' | 'SLACK_APP_TOKEN' | 'SLACK_API_URL'> & Partial<Pick<Env, 'SLACK_MAX_BODY_BYTES'>>;

export interface SlackIdentity {
  teamId: string;
  botUserId: string;
  botId: string;
  url: string;
}

export interface SlackApp {
  app: App;
  /** The client the writer uses (same options as Bolt's). */
  client: WebClient;
  identity: SlackIdentity;
  mode: 'socket' | 'http';
  /** HTTP mode only: mount on POST /slack/events. */
  handleSlackRequest?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface CreateSlackAppOptions extends ListenerDeps {
  env: SlackEnv;
  listeners?: readonly ListenerGroup[];
  /** Clock for request signature timestamps (tests). */
  nowMilliseconds?: () => number;
  /** Signatures already received, to refuse replays (HTTP mode); shared through Redis in the service. */
  seenRequests?: SeenSlackRequests;
}

export async function checkBotToken(client: WebClient, apiUrl: string | undefined): Promise<SlackIdentity> {
  const where = apiUrl ?? 'https://slack.com/api/';
  let result;
  try {
    result = await client.auth.test();
  } catch (err) {
    // Unreachable is not rejected: "check the token" would send a person the wrong way.
    const f = slackCallFailure(err);
    if (f.kind === 'unreachable') {
      throw new SlackStartupError(
        'glidepath_slack_unreachable',
        `Slack at ${where} is unreachable (auth.test: ${f.detail}); the token was not checked. Check SLACK_API_URL (unset for slack.com), DNS and the egress to Slack; \`glidepath check\` tests each of them.`,
        { cause: err },
      );
    }
    throw new SlackStartupError(
      'glidepath_slack_auth_failed',
      `Slack rejected SLACK_BOT_TOKEN at ${where} (auth.test: ${f.kind === 'rejected' ? f.error : explainSlackFailure(f)}). Check that the token is the app's Bot User OAuth Token (xoxb-…), that the app is installed in the workspace, and that SLACK_API_URL points at the right Slack.`,
      { cause: err },
    );
  }
  if (!result.user_id || !result.team_id) {
    throw new SlackStartupError('glidepath_slack_auth_failed', `auth.test at ${where} did not name a bot user; is SLACK_BOT_TOKEN a bot token (xoxb-…)?`);
  }
  return { teamId: result.team_id, botUserId: result.user_id, botId: result.bot_id ?? '', url: result.url ?? '' };
}

/** Socket Mode could not open its socket: say which token, where, and what Slack answered. */
function appTokenRejected(err: unknown, apiUrl: string | undefined): SlackStartupError {
  const code = (err as { data?: { error?: string } }).data?.error ?? (err as Error).message;
  return new SlackStartupError(
    'glidepath_slack_auth_failed',
    `Slack refused to open a Socket Mode connection at ${apiUrl ?? 'https://slack.com/api/'} (apps.connections.open: ${code}). Check that SLACK_APP_TOKEN is the app-level token (xapp-…) with the connections:write scope, that Socket Mode is enabled for the app, and that SLACK_API_URL points at the right Slack.`,
    { cause: err },
  );
}

export async function createSlackApp(options: CreateSlackAppOptions): Promise<SlackApp> {
  const { env, logger } = options;
  const token = env.SLACK_BOT_TOKEN;
  if (!token) throw new SlackStartupError('glidepath_slack_not_configured', 'SLACK_BOT_TOKEN is not set: Glidepath needs the bot token of its Slack app.');
  const socketMode = env.SLACK_APP_TOKEN !== undefined;
  if (!socketMode && !env.SLACK_SIGNING_SECRET) {
    throw new SlackStartupError(
      'glidepath_slack_not_configured',
      'Set SLACK_SIGNING_SECRET (HTTP mode, requests to /slack/events) or SLACK_APP_TOKEN (Socket Mode, xapp-…).',
    );
  }
  const client = createSlackClient(token, env.SLACK_API_URL);
  const identity = await checkBotToken(client, env.SLACK_API_URL);
  const log = logger.child({ component: 'slack' });

  let receiver: Receiver;
  let routed: RoutedHttpReceiver | undefined;
  if (socketMode) {
    // Guarded: a frame @slack/socket-mode cannot parse would otherwise end the process (issue 20).
    receiver = new GuardedSocketModeReceiver({
      appToken: env.SLACK_APP_TOKEN as string,
      logger: boltLogger(log),
      // The receiver hands only `installerOptions.clientOptions` to its Socket Mode client (a top-level
      // `clientOptions` is silently dropped), and that client opens the socket with apps.connections.open
      // at this URL. Only the URL: the client's own retry policy keeps reconnecting through outages.
      ...(env.SLACK_API_URL ? { installerOptions: { clientOptions: { slackApiUrl: env.SLACK_API_URL } } } : {}),
    }, log);
  } else {
    routed = new RoutedHttpReceiver({
      signingSecret: env.SLACK_SIGNING_SECRET as string,
      logger: log,
      ...(options.nowMilliseconds ? { nowMilliseconds: options.nowMilliseconds } : {}),
      ...(env.SLACK_MAX_BODY_BYTES !== undefined ? { bodyLimitBytes: env.SLACK_MAX_BODY_BYTES } : {}),
      ...(options.seenRequests ? { seenRequests: options.seenRequests } : {}),
    });
    receiver = routed;
  }

  const app = new App({
    token,
    // From our own auth.test: Bolt need not call it again, and ignoreSelf knows who we are.
    botId: identity.botId,
    botUserId: identity.botUserId,
    receiver,
    logger: boltLogger(log),
    clientOptions: slackClientOptions(env.SLACK_API_URL),
    extendedErrorHandler: true,
  });

  // The single sink for listener errors: logged with context, never shown to the user as a stack.
  const sink: Parameters<App['error']>[0] = async ({ error, body, context }) => {
    const b = body as { type?: string; command?: string; actions?: { action_id?: string }[]; event?: { type?: string }; user?: { id?: string }; user_id?: string } | undefined;
    log.error(
      {
        err: { message: error.message, code: (error as { code?: string }).code, stack: error.stack },
        request: b?.type ?? b?.event?.type ?? (b?.command ? 'command' : undefined),
        command: b?.command,
        action: b?.actions?.[0]?.action_id,
        user: b?.user?.id ?? b?.user_id,
        team: context.teamId,
      },
      'Slack listener failed',
    );
  };
  app.error(sink);

  for (const group of options.listeners ?? LISTENER_GROUPS) group.register(app, options);

  return {
    app,
    client,
    identity,
    mode: socketMode ? 'socket' : 'http',
    ...(routed ? { handleSlackRequest: routed.handleSlackRequest } : {}),
    start: async () => {
      try {
        await app.start();
      } catch (err) {
        if (!socketMode) throw err;
        throw appTokenRejected(err, env.SLACK_API_URL);
      }
      log.info({ mode: socketMode ? 'socket' : 'http', team: identity.teamId, bot: identity.botUserId }, 'Slack app started');
    },
    stop: async () => {
      await app.stop();
    },
  };
}
