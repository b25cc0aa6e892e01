import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { eventually } from '../helpers/slack-harness.js';

const SECRET = 'service-test-signing-secret';
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function boot(): Promise<{ glidepath: Glidepath; slack: SlackStandIn }> {
  const slack = await startSlackStandIn({ botToken: 'xoxb-service' });
  cleanup.push(() => slack.close());
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-service', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: slack.apiUrl });
  cleanup.push(() => dropPrefix(env.REDIS_PREFIX));
  const glidepath = await startTestGlidepath(testConfig(), env);
  cleanup.push(() => glidepath.close());
  return { glidepath, slack };
}

describe('Slack in the Glidepath process (one port for ingest and Slack)', () => {
  it('posts the thread of facts ingested over HTTP and answers Slack on /slack/events', async () => {
    const { glidepath, slack } = await boot();
    const shape = { generation: 5, rv: 300, releaseId: 'rel-9', podHash: '7c9d6b5f48', stableRS: '6d9b8c7f5a', step: 1, phase: 'Paused' as const };
    const res = await postJson(`${glidepath.url}/v1/facts/rollouts`, rolloutBody(shape));
    expect(res.status).toBe(202);
    const parent = await eventually(() => slack.transcript.messages('C0123CHECKOUT')[0]?.replies[0] && slack.transcript.messages('C0123CHECKOUT')[0], 'the thread');
    expect(parent.text).toContain('Release rel-9 (checkout)');
    expect(parent.replies[0]?.text).toContain('waits for approval');

    const sender = new SignedSender({ url: `${glidepath.url}/slack/events`, signingSecret: SECRET });
    const responseUrl = slack.responseUrl();
    const click = await sender.blockAction({ actionId: 'glidepath.approve', value: '{}', userId: 'U1', channelId: 'C0123CHECKOUT', messageTs: parent.replies[0]!.ts, responseUrl });
    expect(click.status).toBe(200);
    const answer = await eventually(() => slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), 'the answer');
    expect(String(answer.body.text)).toMatch(/nothing was changed/i);

    const metrics = await (await fetch(`${glidepath.url}/metrics`)).text();
    expect(metrics).toContain('glidepath_slack_calls_total{method="chat.postMessage",outcome="ok"} 2');
  });
});
