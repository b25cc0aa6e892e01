/**
 * `glidepath check`, Slack: the bot token (auth.test) and every pipeline channel
 * (conversations.info: it exists, the bot can see it and is a member). The client is the
 * product's (src/slack/client.ts) with SLACK_API_URL, each call made once: a check says what
 * is wrong now.
 */
import type { WebClient } from '@slack/web-api';
import type { Env } from '../config/env.js';
import type { ConfigFile } from '../config/file.js';
import { createSlackClient, withoutRetries } from '../slack/client.js';
import { explainSlackFailure as explain, slackCallFailure as failure } from '../slack/errors.js';
import { fail, ok, type CheckLine } from './check-line.js';

const SUBJECT = 'slack';

async function checkChannel(client: WebClient, channel: string, pipelines: string[], bot: string): Promise<CheckLine> {
  const subject = `${SUBJECT} channel ${channel} (pipeline ${pipelines.join(', ')})`;
  try {
    const info = await client.conversations.info({ channel });
    const name = info.channel?.name ? `#${info.channel.name}` : channel;
    if (info.channel?.is_member === false) return fail(subject, `the bot is not a member of ${name}: invite @${bot} to ${name} (/invite @${bot} in the channel)`);
    return ok(subject, `${name}, the bot is a member`);
  } catch (err) {
    const f = failure(err);
    if (f.kind === 'unreachable') return fail(subject, `Slack is unreachable (${f.detail})`);
    if (f.kind === 'rejected' && f.error === 'channel_not_found') return fail(subject, `${channel} does not exist or the bot cannot see it (a private channel it was not invited to): check pipelines[].channel, or invite @${bot}`);
    return fail(subject, `conversations.info failed: ${explain(f)}`);
  }
}

export async function checkSlack(env: Env, config: ConfigFile | undefined, timeoutMs: number): Promise<CheckLine[]> {
  if (!env.SLACK_BOT_TOKEN) return [fail(SUBJECT, 'SLACK_BOT_TOKEN is not set: Glidepath needs the Bot User OAuth Token (xoxb-…) of its Slack app')];
  const where = env.SLACK_API_URL ?? 'https://slack.com/api/';
  const client = withoutRetries(createSlackClient(env.SLACK_BOT_TOKEN, env.SLACK_API_URL), timeoutMs);
  let bot: string;
  try {
    const auth = await client.auth.test();
    bot = auth.user ?? 'glidepath';
    if (!auth.user_id) return [fail(SUBJECT, `auth.test at ${where} names no bot user: is SLACK_BOT_TOKEN a bot token (xoxb-…)?`)];
  } catch (err) {
    const f = failure(err);
    if (f.kind === 'unreachable') return [fail(SUBJECT, `Slack at ${where} is unreachable (${f.detail}): check SLACK_API_URL (unset for slack.com), DNS and the egress to Slack`)];
    return [fail(SUBJECT, `Slack at ${where} rejected SLACK_BOT_TOKEN (auth.test: ${explain(f)}); check that it is the app's Bot User OAuth Token (xoxb-…) and the app is installed`)];
  }
  const lines = [ok(SUBJECT, `SLACK_BOT_TOKEN accepted at ${where} (bot @${bot})`)];
  const pipelinesByChannel = new Map<string, string[]>();
  for (const p of config?.pipelines ?? []) pipelinesByChannel.set(p.channel, [...(pipelinesByChannel.get(p.channel) ?? []), p.name]);
  // One after another: conversations.info is Tier 3, and a workspace has few pipeline channels.
  for (const [channel, pipelines] of pipelinesByChannel) lines.push(await checkChannel(client, channel, pipelines, bot));
  return lines;
}
