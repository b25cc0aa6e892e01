/**
 * The Slack side of a request as the commands see it (command-port.ts SlackSurface): answers
 * through response_url when there is one, otherwise as an ephemeral message to the person.
 */
import type { RespondFn } from '@slack/bolt';
import type { KnownBlock, WebClient } from '@slack/web-api';
import type { CommandContext, CommandServices, SlackSurface } from './command-port.js';
import { classifySlackError } from '../writer/slack-errors.js';

type Blocks = KnownBlock[];

const RATE_LIMIT_ATTEMPTS = 5;
/** classifySlackError waits at least 1 s; a person is not kept waiting more than 30 s a time. */
const RATE_LIMIT_MAX_WAIT_MS = 30_000;

/**
 * The shared client rejects rate-limited calls (the writer budgets its own); a person's answer is
 * worth waiting for, so it is sent again after Slack's Retry-After, a few times.
 */
async function patiently<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const failure = classifySlackError(err);
      if (failure.kind !== 'rate-limited' || attempt >= RATE_LIMIT_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, Math.min(failure.retryAfterMs, RATE_LIMIT_MAX_WAIT_MS)));
    }
  }
}

export function slackSurface(options: { client: WebClient; channel: string; userId: string; respond?: RespondFn; triggerId?: string }): SlackSurface {
  const { client, channel, userId, respond, triggerId } = options;
  return {
    async reply(message) {
      const blocks = message.blocks as Blocks | undefined;
      if (respond) {
        await respond({ response_type: message.inChannel ? 'in_channel' : 'ephemeral', replace_original: message.replaceOriginal ?? false, text: message.text, ...(blocks ? { blocks } : {}) });
      } else if (message.inChannel) {
        await patiently(() => client.chat.postMessage({ channel, text: message.text, ...(blocks ? { blocks } : {}) }));
      } else {
        await patiently(() => client.chat.postEphemeral({ channel, user: userId, text: message.text, ...(blocks ? { blocks } : {}) }));
      }
    },
    async post(message, at) {
      const blocks = message.blocks as Blocks | undefined;
      const res = await patiently(() => client.chat.postMessage({ channel: at?.channel ?? channel, text: message.text, ...(blocks ? { blocks } : {}), ...(at?.threadTs ? { thread_ts: at.threadTs } : {}) }));
      return { channel: res.channel ?? at?.channel ?? channel, ts: res.ts ?? '' };
    },
    async update(ref, message) {
      const blocks = message.blocks as Blocks | undefined;
      await patiently(() => client.chat.update({ channel: ref.channel, ts: ref.ts, text: message.text, ...(blocks ? { blocks } : {}) }));
    },
    async openDialog(view) {
      if (!triggerId) throw new Error('a dialog needs the trigger_id of a slash command or a click');
      await client.views.open({ trigger_id: triggerId, view });
    },
  };
}

/** The services stay behind the context (not copied): cluster clients are built when first used. */
export function commandContext(services: CommandServices, user: { id: string; name?: string }, channel: string, slack: SlackSurface): CommandContext {
  const ctx = Object.create(services) as CommandContext;
  return Object.assign(ctx, { user, channel, slack });
}

export const NOT_CONFIGURED = 'Acting from Slack is not available in this Glidepath process: no cluster client is configured (see the clusters section of the Glidepath config and the start-up log). Nothing was changed.';
