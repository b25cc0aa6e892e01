/**
 * Delivery figures end to end: releases of checkout reduced by the worker (its own step, real
 * Redis under an own prefix), then `/glidepath stats` and the App Home over the real Bolt app and
 * the Slack stand-in say what happened: counts, the share failed or aborted, median lead time and
 * time to recover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { DAY_MS } from '../../src/releases/store/delivery-figures.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { ResponseUrlPost } from '../../sandbox/slack/transcript.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { eventually } from '../helpers/slack-harness.js';
import { CheckoutReleases, MINUTE } from '../helpers/delivery-releases.js';

const SECRET = 'delivery-stats-signing-secret';
const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-delivery', SLACK_SIGNING_SECRET: SECRET });
let slack: SlackStandIn;
let app: Glidepath;
let sender: SignedSender;

beforeAll(async () => {
  slack = await startSlackStandIn({ botToken: 'xoxb-delivery' });
  // Ingest (the Bolt app, /glidepath) and the worker (the reducer, called directly below); no writer.
  // The story's facts are hours old: with the usual 20-minute stall, each release's watchdog is due
  // at once and its fact (heard now) could land between two of the story's and date what follows.
  const config = testConfig();
  const quiet = { ...config, settings: { ...config.settings, stallAfterMinutes: 60 * 24 * 60 } };
  app = await startTestGlidepath(quiet, { ...env, SLACK_API_URL: slack.apiUrl }, { roles: ['ingest', 'worker'] });
  sender = new SignedSender({ url: `${app.url}/slack/events`, signingSecret: SECRET });
  const releases = new CheckoutReleases();
  const t = Date.now() - 4 * 60 * MINUTE;
  const facts = [
    // 10 days ago: in the month, not the week.
    ...releases.completes(1, t - 10 * DAY_MS, 40 * MINUTE),
    ...releases.completes(2, t, 20 * MINUTE),
    ...releases.fails(3, t + 30 * MINUTE, 5 * MINUTE),
    // Completes 35 minutes after rel-3 failed: the time to recover.
    ...releases.completes(4, t + 40 * MINUTE, 30 * MINUTE),
    ...releases.aborted(5, t + 80 * MINUTE, 5 * MINUTE),
  ];
  for (const fact of facts) await app.reducer!.process(fact);
  // rel-4 took staging from the failed rel-3: the worker feeds that back through the facts queue.
  await eventually(async () => ((await app.store.get('checkout', 'rel-3'))?.status === 'Superseded' ? true : undefined), 'rel-3 superseded');
}, 60_000);

afterAll(async () => {
  await app?.close();
  await slack?.close();
  await dropPrefix(env.REDIS_PREFIX);
});

async function command(text: string): Promise<string> {
  const responseUrl = slack.responseUrl();
  const res = await sender.slashCommand({ command: '/glidepath', text, userId: 'U0ALICE', channelId: 'C0123CHECKOUT', responseUrl });
  expect(res.status).toBe(200);
  const answer = await eventually<ResponseUrlPost>(() => slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), `the answer to /glidepath ${text}`);
  return String(answer.body.text);
}

const WEEK = '*7 days:* 4 started · 2 completed · 1 failed · 1 aborted · 1 superseded · 50% failed or aborted (2 of 4 ended) · median lead time 25m · median time to recover 35m';
const MONTH = '*30 days:* 5 started · 3 completed · 1 failed · 1 aborted · 1 superseded · 40% failed or aborted (2 of 5 ended) · median lead time 30m · median time to recover 35m';

describe('delivery figures', () => {
  it('/glidepath stats checkout answers with the week and the month', async () => {
    const text = await command('stats checkout');
    expect(text).toContain('*checkout* delivery');
    expect(text).toContain(WEEK);
    expect(text).toContain(MONTH);
    // The chart: one character per day, the newest (today, or yesterday just after midnight) not empty.
    const chart = /`([▁▂▃▄▅▆▇█]{30})` completed per day/.exec(text)?.[1];
    expect(chart).toBeDefined();
    expect(chart!.slice(-2)).not.toBe('▁▁');
  });

  it('/glidepath stats without a pipeline answers for each one', async () => {
    const text = await command('stats');
    expect(text).toContain('*checkout* delivery');
    expect(text).toContain(WEEK);
  });

  it('/glidepath stats of a pipeline that does not exist says which ones do, and how to ask', async () => {
    const text = await command('stats nope');
    expect(text).toContain('there is no pipeline "nope" (pipelines: checkout)');
    expect(text).toContain('/glidepath stats [pipeline]');
  });

  it('/glidepath help lists stats', async () => {
    expect(await command('help')).toContain('`stats [pipeline]`');
  });

  it('the App Home shows the same figures under the pipeline', async () => {
    const res = await sender.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D1', tab: 'home', event_ts: '1.1' });
    expect(res.status).toBe(200);
    const view = await eventually(() => slack.transcript.homeViews.get('U0ALICE'), 'the Home view');
    const text = JSON.stringify(view);
    expect(text).toContain(JSON.stringify(WEEK).slice(1, -1));
    expect(text).toContain(JSON.stringify(MONTH).slice(1, -1));
  });
});
