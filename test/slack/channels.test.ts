import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { checkChannels } from '../../src/slack/channels.js';
import { createSlackClient } from '../../src/slack/client.js';
import { captureLogger } from '../helpers/slack-harness.js';
import { pipelineConfig } from './support/records.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

describe('checkChannels at start-up', () => {
  it('names pipelines whose channel is missing or lacks the bot, and passes the good ones', async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-c', channels: ['C0GOOD', 'C0NOBOT'], notInChannel: ['C0NOBOT'] });
    const log = captureLogger();
    const problems = await checkChannels(
      createSlackClient('xoxb-c', slack.apiUrl),
      [pipelineConfig('good', 'C0GOOD'), pipelineConfig('nobot', 'C0NOBOT'), pipelineConfig('gone', 'C0GONE')],
      log.logger,
    );
    expect(problems.map((p) => [p.pipeline, p.problem])).toEqual([
      ['nobot', 'the bot is not a member of C0NOBOT; invite it with /invite @Glidepath'],
      ['gone', 'channel C0GONE does not exist or the bot cannot see it'],
    ]);
    expect(log.lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([
      'pipeline nobot: the bot is not a member of C0NOBOT; invite it with /invite @Glidepath; its release threads cannot be posted',
      'pipeline gone: channel C0GONE does not exist or the bot cannot see it; its release threads cannot be posted',
    ]);
  });
});
