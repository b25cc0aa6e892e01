/**
 * Slack replay (issue 9, item 8): a signed request is processed once. Sent again inside the
 * 5-minute window (to this replica or another on the same Redis) it is refused, and a timestamp
 * beyond a minute in the future is refused as well.
 */
import { redisClient } from '../helpers/slack-harness.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signature, SignedSender } from '../../sandbox/slack/sender.js';
import { SLACK_TEST_SECRET, startSlackGlidepath, type SlackGlidepath } from '../helpers/slack-glidepath.js';
import { eventually } from '../helpers/slack-harness.js';

function helpCommand(responseUrl: string): string {
  return new URLSearchParams({
    team_id: 'T0STANDIN',
    channel_id: 'C0123CHECKOUT',
    user_id: 'U1',
    command: '/glidepath',
    text: 'help',
    api_app_id: 'A0GLIDEPATH',
    response_url: responseUrl,
    trigger_id: `trigger-${responseUrl}`,
  }).toString();
}

const FORM = 'application/x-www-form-urlencoded';

describe('signed Slack requests are processed once', () => {
  let first: SlackGlidepath;
  let replica: SlackGlidepath;
  let redis: Redis;
  beforeAll(async () => {
    first = await startSlackGlidepath();
    replica = await startSlackGlidepath({}, { slack: first.slack, prefix: first.glidepath.keys.prefix });
    redis = redisClient();
  });
  afterAll(async () => {
    await replica?.close();
    await first?.close();
    redis?.disconnect();
  });

  const answers = (responseUrl: string) => first.slack.transcript.responses.filter((r) => responseUrl.endsWith(r.id));

  it('refuses the same signed request sent again, to this replica or another, and answers the command once', async () => {
    const sender = new SignedSender({ url: first.eventsUrl, signingSecret: SLACK_TEST_SECRET });
    const toReplica = new SignedSender({ url: replica.eventsUrl, signingSecret: SLACK_TEST_SECRET });
    const responseUrl = first.slack.responseUrl();
    const body = helpCommand(responseUrl);
    const timestamp = Math.floor(Date.now() / 1000);

    expect((await sender.post(body, FORM, { timestamp })).status).toBe(200);
    await eventually(() => answers(responseUrl)[0], 'the answer to /glidepath help');

    const again = await sender.post(body, FORM, { timestamp });
    expect(again).toEqual({ status: 401, body: 'this signed request was already received\n' });
    expect((await toReplica.post(body, FORM, { timestamp })).status).toBe(401);

    // A fresh request is answered; by then a processed replay would have answered too.
    const nextUrl = first.slack.responseUrl();
    expect((await sender.post(helpCommand(nextUrl), FORM)).status).toBe(200);
    await eventually(() => answers(nextUrl)[0], 'the answer to the next command');
    expect(answers(responseUrl)).toHaveLength(1);

    // Remembered for the replay window only.
    const ttl = await redis.pttl(first.glidepath.keys.slackSeenRequest(signature(SLACK_TEST_SECRET, timestamp, body)));
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(303_000);
  });

  it('refuses a timestamp a day (or two minutes) in the future, and tolerates a little clock skew', async () => {
    const sender = new SignedSender({ url: first.eventsUrl, signingSecret: SLACK_TEST_SECRET });
    const now = Math.floor(Date.now() / 1000);
    const tomorrow = first.slack.responseUrl();
    expect(await sender.post(helpCommand(tomorrow), FORM, { timestamp: now + 86_400 })).toEqual({ status: 401, body: 'the request timestamp is in the future\n' });
    expect((await sender.post(helpCommand(first.slack.responseUrl()), FORM, { timestamp: now + 120 })).status).toBe(401);

    const skewed = first.slack.responseUrl();
    expect((await sender.post(helpCommand(skewed), FORM, { timestamp: now + 20 })).status).toBe(200);
    await eventually(() => answers(skewed)[0], 'the answer to a request 20 s ahead');
    expect(answers(tomorrow)).toHaveLength(0);
  });
});
