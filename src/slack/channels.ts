/**
 * At start-up, every pipeline channel is looked up once, so a wrong channel id or a bot that
 * was never invited is named in the log right away instead of on the first release.
 */
import { createHash } from 'node:crypto';
import type { WebClient } from '@slack/web-api';
import type { PipelineConfig } from '../config/file.js';
import type { Logger } from '../obs/logger.js';

export interface ChannelProblem {
  pipeline: string;
  channel: string;
  problem: string;
}

export async function checkChannels(client: WebClient, pipelines: readonly PipelineConfig[], logger: Logger): Promise<ChannelProblem[]> {
  const problems: ChannelProblem[] = [];
  for (const p of pipelines) {
    try {
      const info = await client.conversations.info({ channel: p.channel });
      if (info.channel?.is_member === false) {
        problems.push({ pipeline: p.name, channel: p.channel, problem: `the bot is not a member of ${p.channel}; invite it with /invite @Glidepath` });
      }
    } catch (err) {
      const code = (err as { data?: { error?: string } }).data?.error ?? (err as Error).message;
      problems.push({
        pipeline: p.name,
        channel: p.channel,
        problem: code === 'channel_not_found' ? `channel ${p.channel} does not exist or the bot cannot see it` : `conversations.info failed: ${code}`,
      });
    }
  }
  for (const pr of problems) logger.error(pr, `pipeline ${pr.pipeline}: ${pr.problem}; its release threads cannot be posted`);
  return problems;
}

/** How long a deployment trusts a successful channel check: a day, then one replica looks again. */
export const CHANNELS_CHECKED_TTL_S = 24 * 3_600;

/**
 * The check once per deployment rather than per replica start: the digest of the channels
 * found usable is kept in Redis (a day); replicas starting with the same channels skip
 * conversations.info. A check that found problems is not remembered, so each start names them.
 */
export async function checkChannelsOnce(
  redis: { get(key: string): Promise<string | null>; set(key: string, value: string, ex: 'EX', seconds: number): Promise<unknown> },
  key: string,
  client: WebClient,
  pipelines: readonly PipelineConfig[],
  logger: Logger,
): Promise<ChannelProblem[] | 'already checked'> {
  const digest = createHash('sha256').update([...new Set(pipelines.map((p) => p.channel))].sort().join('\n')).digest('hex');
  if ((await redis.get(key).catch(() => null)) === digest) return 'already checked';
  const problems = await checkChannels(client, pipelines, logger);
  if (problems.length === 0) await redis.set(key, digest, 'EX', CHANNELS_CHECKED_TTL_S).catch(() => undefined);
  return problems;
}
