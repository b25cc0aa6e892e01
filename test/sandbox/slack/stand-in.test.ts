import { ErrorCode, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn, type SlackStandInOptions } from '../../../sandbox/slack/server.js';

let standIn: SlackStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

async function start(options: SlackStandInOptions = {}): Promise<{ slack: SlackStandIn; client: WebClient }> {
  standIn = await startSlackStandIn({ botToken: 'xoxb-test', ...options });
  const client = new WebClient('xoxb-test', { slackApiUrl: standIn.apiUrl, rejectRateLimitedCalls: true, retryConfig: { retries: 0 } });
  return { slack: standIn, client };
}

async function platformError(p: Promise<unknown>): Promise<string> {
  const err = (await p.then(() => undefined, (e: unknown) => e)) as WebAPIPlatformError | undefined;
  if (err?.code !== ErrorCode.PlatformError) throw new Error(`expected a platform error, got ${String(err)}`);
  return err.data.error;
}

describe('Slack stand-in (driven by the real WebClient)', () => {
  it('answers auth.test for the right token and invalid_auth otherwise', async () => {
    const { slack, client } = await start();
    expect(await client.auth.test()).toMatchObject({ ok: true, user_id: 'U0GLIDEPATH', team_id: 'T0STANDIN' });
    const wrong = new WebClient('xoxb-wrong', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
    expect(await platformError(wrong.auth.test())).toBe('invalid_auth');
  });

  it('records a thread: parent, replies and every edit of the parent', async () => {
    const { slack, client } = await start();
    const parent = await client.chat.postMessage({ channel: 'C0CHECKOUT', text: 'v1', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'v1' } }] });
    await client.chat.postMessage({ channel: 'C0CHECKOUT', thread_ts: parent.ts!, text: 'paused' });
    await client.chat.update({ channel: 'C0CHECKOUT', ts: parent.ts!, text: 'v2', blocks: [] });
    const [message, ...others] = slack.transcript.messages('C0CHECKOUT');
    expect(others).toEqual([]);
    expect(message?.text).toBe('v2');
    expect(message?.edits.map((e) => e.text)).toEqual(['v1']);
    expect(message?.replies.map((r) => r.text)).toEqual(['paused']);
    expect(await platformError(client.chat.update({ channel: 'C0CHECKOUT', ts: '1.000999', text: 'x' }))).toBe('message_not_found');
    expect(await platformError(client.chat.postMessage({ channel: 'C0CHECKOUT', thread_ts: '1.000999', text: 'x' }))).toBe('thread_not_found');
  });

  it('answers 429 with Retry-After past one message per second per channel, per channel', async () => {
    const t = 1_800_000_000_000;
    const { slack, client } = await start({ now: () => t });
    slack.setLimits({ postMessagePerChannel: { burst: 2, perSecond: 1 }, methods: {} });
    await client.chat.postMessage({ channel: 'C1', text: 'a' });
    await client.chat.postMessage({ channel: 'C1', text: 'b' });
    const err = (await client.chat.postMessage({ channel: 'C1', text: 'c' }).catch((e: unknown) => e)) as WebAPIRateLimitedError;
    expect(err.code).toBe(ErrorCode.RateLimitedError);
    expect(err.retryAfter).toBe(1);
    await client.chat.postMessage({ channel: 'C2', text: 'other channel' });
    expect(slack.rateLimited.get('chat.postMessage')).toBe(1);
    expect(slack.transcript.messages('C1').map((m) => m.text)).toEqual(['a', 'b']);
  });

  it('limits chat.update per workspace and refills with time', async () => {
    let t = 1_800_000_000_000;
    const { slack, client } = await start({ now: () => t });
    slack.setLimits({ postMessagePerChannel: { burst: 10, perSecond: 1 }, methods: { 'chat.update': { burst: 1, perSecond: 50 / 60 } } });
    const a = await client.chat.postMessage({ channel: 'C1', text: 'a' });
    const b = await client.chat.postMessage({ channel: 'C2', text: 'b' });
    await client.chat.update({ channel: 'C1', ts: a.ts!, text: 'a2' });
    const err = (await client.chat.update({ channel: 'C2', ts: b.ts!, text: 'b2' }).catch((e: unknown) => e)) as WebAPIRateLimitedError;
    expect(err.retryAfter).toBe(2);
    t += 2000;
    await client.chat.update({ channel: 'C2', ts: b.ts!, text: 'b2' });
    expect(slack.transcript.messages('C2')[0]?.text).toBe('b2');
  });

  it('rejects over-long messages as Slack does', async () => {
    const { client } = await start();
    const section = (n: number) => ({ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(n) } });
    expect(await platformError(client.chat.postMessage({ channel: 'C1', text: 't', blocks: Array.from({ length: 51 }, () => section(1)) }))).toBe('invalid_blocks');
    expect(await platformError(client.chat.postMessage({ channel: 'C1', text: 't', blocks: [section(3001)] }))).toBe('invalid_blocks');
    expect(await platformError(client.chat.postMessage({ channel: 'C1', text: 't', blocks: Array.from({ length: 5 }, () => section(2900)) }))).toBe('msg_blocks_too_long');
    expect(await platformError(client.chat.postMessage({ channel: 'C1', text: 't', blocks: [{ type: 'actions', elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'b' }, value: 'v'.repeat(2001) }] }] }))).toBe('invalid_blocks');
  });

  it('knows channels, membership, users and user groups', async () => {
    const { client } = await start({ channels: ['C1', 'C2'], notInChannel: ['C2'], users: { U1: { name: 'alice' } }, usergroups: { S1: ['U1', 'U2'] } });
    expect(await platformError(client.chat.postMessage({ channel: 'C9', text: 'x' }))).toBe('channel_not_found');
    expect(await platformError(client.chat.postMessage({ channel: 'C2', text: 'x' }))).toBe('not_in_channel');
    expect((await client.conversations.info({ channel: 'C2' })).channel).toMatchObject({ id: 'C2', is_member: false });
    expect((await client.users.info({ user: 'U1' })).user).toMatchObject({ name: 'alice' });
    expect(await platformError(client.users.info({ user: 'U9' }))).toBe('user_not_found');
    expect((await client.usergroups.users.list({ usergroup: 'S1' })).users).toEqual(['U1', 'U2']);
  });

  it('records ephemerals, Home views, modals and response_url posts', async () => {
    const { slack, client } = await start();
    await client.chat.postEphemeral({ channel: 'C1', user: 'U1', text: 'only you' });
    await client.views.publish({ user_id: 'U1', view: { type: 'home', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'home' } }] } });
    await client.views.open({ trigger_id: 't1', view: { type: 'modal', title: { type: 'plain_text', text: 'm' }, blocks: [] } });
    const url = slack.responseUrl();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'done', response_type: 'ephemeral' }) });
    expect(res.status).toBe(200);
    expect(slack.transcript.ephemerals).toEqual([{ channel: 'C1', user: 'U1', text: 'only you', blocks: [] }]);
    expect(slack.transcript.homeViews.get('U1')).toMatchObject({ type: 'home' });
    expect(slack.transcript.openedViews).toHaveLength(1);
    expect(slack.transcript.responses[0]?.body).toEqual({ text: 'done', response_type: 'ephemeral' });
    expect((await fetch(`${slack.url}/respond/unknown`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('injects faults: 5xx, platform errors, 429 and dropped connections', async () => {
    const { slack, client } = await start();
    slack.injectFaults('chat.postMessage', 1, { kind: 'http', status: 503 });
    slack.injectFaults('chat.postMessage', 1, { kind: 'error', error: 'invalid_auth' });
    slack.injectFaults('chat.postMessage', 1, { kind: 'rate-limited', retryAfterSeconds: 7 });
    slack.injectFaults('chat.postMessage', 1, { kind: 'drop-connection' });
    const codes: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      codes.push(await client.chat.postMessage({ channel: 'C1', text: 'x' }).then(() => 'ok', (e: { code: string; retryAfter?: number }) => `${e.code}${e.retryAfter ? `:${e.retryAfter}` : ''}`));
    }
    expect(codes).toEqual([ErrorCode.HTTPError, ErrorCode.PlatformError, `${ErrorCode.RateLimitedError}:7`, ErrorCode.RequestError, 'ok']);
  });

  it('stores the post on accepted-then-failed and slow faults although the client sees an error', async () => {
    const { slack, client } = await start();
    const slow = new WebClient('xoxb-test', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, timeout: 200 });
    slack.injectFaults('chat.postMessage', 1, { kind: 'accepted-then-http', status: 500 });
    slack.injectFaults('chat.postMessage', 1, { kind: 'accepted-then-drop' });
    slack.injectFaults('chat.postMessage', 1, { kind: 'slow', delayMs: 1_000 });
    const codes: string[] = [];
    for (const text of ['a', 'b', 'c']) codes.push(await slow.chat.postMessage({ channel: 'C1', text }).then(() => 'ok', (e: { code: string }) => e.code));
    expect(codes).toEqual([ErrorCode.HTTPError, ErrorCode.RequestError, ErrorCode.RequestError]);
    expect(slack.transcript.messages('C1').map((m) => m.text)).toEqual(['a', 'b', 'c']);
    expect((await client.chat.postMessage({ channel: 'C1', text: 'd' })).ok).toBe(true);
  });

  it('answers 503 to every method during an outage, and normally after it ends', async () => {
    const { slack, client } = await start();
    slack.outage(60_000);
    const code = await client.chat.postMessage({ channel: 'C1', text: 'x' }).then(() => 'ok', (e: { code: string; statusCode?: number }) => `${e.code}:${e.statusCode}`);
    expect(code).toBe(`${ErrorCode.HTTPError}:503`);
    expect(slack.outageRefused.get('chat.postMessage')).toBe(1);
    expect(slack.transcript.messages('C1')).toHaveLength(0);
    slack.outage(0);
    expect((await client.chat.postMessage({ channel: 'C1', text: 'x' })).ok).toBe(true);
  });

  it('keeps message metadata and shows it in history and replies only with include_all_metadata', async () => {
    const { client } = await start();
    const metadata = { event_type: 'glidepath_post', event_payload: { release: 'rel-1', effect: 'parent' } };
    const parent = await client.chat.postMessage({ channel: 'C1', text: 'parent', metadata });
    await client.chat.postMessage({ channel: 'C1', text: 'reply', thread_ts: parent.ts!, metadata: { ...metadata, event_payload: { release: 'rel-1', effect: 'e1' } } });
    const plain = await client.conversations.history({ channel: 'C1' });
    expect(plain.messages?.[0]?.metadata).toBeUndefined();
    const history = await client.conversations.history({ channel: 'C1', include_all_metadata: true });
    expect(history.messages?.map((m) => m.metadata)).toEqual([metadata]);
    const replies = await client.conversations.replies({ channel: 'C1', ts: parent.ts!, include_all_metadata: true });
    expect(replies.messages?.map((m) => (m.metadata?.event_payload as { effect?: string } | undefined)?.effect)).toEqual(['parent', 'e1']);
    const later = await client.conversations.history({ channel: 'C1', oldest: String(Number(parent.ts) + 1) });
    expect(later.messages).toEqual([]);
    expect(await platformError(client.chat.postMessage({ channel: 'C1', text: 'x', metadata: { event_type: '', event_payload: {} } }))).toBe('invalid_metadata_format');
  });
});
