/**
 * At start-up, every pipeline channel is looked up once, so a wrong channel id or a bot that
 * was never invited is named in the log right away instead of on the first release.
 */
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
