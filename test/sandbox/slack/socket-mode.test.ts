/**
 * The stand-in's Socket Mode protocol, seen from a bare WebSocket client that can misbehave the way
 * Bolt never does: ack late or never, ack twice, send garbage, ignore `disconnect`, reuse a URL.
 * (test/slack/socket-mode.test.ts runs Bolt's real receiver against it.)
 */
import { WebClient } from '@slack/web-api';
import { WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { EnvelopeNotAcked, type SocketModeOptions } from '../../../sandbox/slack/socket-mode.js';
import { startSlackStandIn, type SlackStandIn } from '../../../sandbox/slack/server.js';

const APP_TOKEN = 'xapp-1-test';

let standIn: SlackStandIn | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await standIn?.close();
  standIn = undefined;
});

async function start(socketMode: Omit<SocketModeOptions, 'appToken' | 'team'> = {}): Promise<SlackStandIn> {
  standIn = await startSlackStandIn({ botToken: 'xoxb-test', appToken: APP_TOKEN, socketMode: { pingIntervalMs: 0, ...socketMode } });
  return standIn;
}

async function openUrl(slack: SlackStandIn, token = APP_TOKEN): Promise<{ ok: boolean; url?: string; error?: string }> {
  const res = await fetch(`${slack.apiUrl}apps.connections.open`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as { ok: boolean; url?: string; error?: string };
}

type Message = Record<string, any>;

/** A raw Socket Mode client: every message it gets, in order. */
async function connect(url: string): Promise<{ ws: WebSocket; next: () => Promise<Message>; closed: Promise<void> }> {
  const ws = new WebSocket(url);
  sockets.push(ws);
  const queue: Message[] = [];
  const waiters: ((m: Message) => void)[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as Message;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, closed, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiters.push(resolve))) };
}

describe('Slack stand-in: Socket Mode', () => {
  it('opens a connection only for the app-level token, with a URL good for one connection, and says hello', async () => {
    const slack = await start();
    expect(await openUrl(slack, 'xoxb-test')).toEqual({ ok: false, error: 'invalid_auth' });
    const unauthenticated = await fetch(`${slack.apiUrl}apps.connections.open`, { method: 'POST' });
    expect(await unauthenticated.json()).toEqual({ ok: false, error: 'not_authed' });
    // The real WebClient, as @slack/socket-mode calls it.
    const opened = await new WebClient(APP_TOKEN, { slackApiUrl: slack.apiUrl }).apps.connections.open();
    expect(opened.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=[0-9a-f-]+&app_id=A0GLIDEPATH$/);

    const client = await connect(opened.url!);
    expect(await client.next()).toMatchObject({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0GLIDEPATH' } });
    const reused = new WebSocket(opened.url!);
    // Refused: terminating it in afterEach reports "closed before the connection was established".
    reused.on('error', () => undefined);
    sockets.push(reused);
    const status = await new Promise<number>((resolve) => reused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
    expect(slack.socketMode.stats).toMatchObject({ urlsIssued: 1, connections: 1, open: 1 });
  });

  it('delivers envelopes and resolves each on its ack; a slash command answered in the ack is shown to the person', async () => {
    const slack = await start();
    const client = await connect((await openUrl(slack)).url!);
    await client.next();

    const acked = slack.socketMode.slashCommand({ command: '/glidepath', text: 'help', userId: 'U0ALICE', channelId: 'C0CHECKOUT', responseUrl: slack.responseUrl() });
    const envelope = await client.next();
    expect(envelope).toMatchObject({ type: 'slash_commands', accepts_response_payload: true, payload: { command: '/glidepath', text: 'help', user_id: 'U0ALICE', channel_id: 'C0CHECKOUT' } });
    expect(envelope).not.toHaveProperty('retry_attempt');
    client.ws.send(JSON.stringify({ envelope_id: envelope.envelope_id, payload: { text: 'usage: /glidepath status' } }));
    expect(await acked).toEqual({ envelopeId: envelope.envelope_id, payload: { text: 'usage: /glidepath status' }, retryAttempt: 0 });
    expect(slack.transcript.ephemerals).toEqual([{ channel: 'C0CHECKOUT', user: 'U0ALICE', text: 'usage: /glidepath status', blocks: [] }]);

    const clicked = slack.socketMode.blockAction({ actionId: 'glidepath.approve', value: '{}', userId: 'U0ALICE', channelId: 'C0CHECKOUT', messageTs: '1.000001', responseUrl: slack.responseUrl() });
    const click = await client.next();
    expect(click).toMatchObject({ type: 'interactive', accepts_response_payload: false, payload: { type: 'block_actions', actions: [{ action_id: 'glidepath.approve' }] } });
    // Garbage and acks for envelopes not in flight are ignored; the real ack still counts.
    client.ws.send('not json');
    client.ws.send(JSON.stringify({ envelope_id: 'no-such-envelope' }));
    client.ws.send(JSON.stringify({ envelope_id: click.envelope_id }));
    expect(await clicked).toMatchObject({ envelopeId: click.envelope_id, payload: undefined, retryAttempt: 0 });
    client.ws.send(JSON.stringify({ envelope_id: click.envelope_id }));

    const submitted = slack.socketMode.viewSubmission({ userId: 'U0ALICE', view: { callback_id: 'glidepath.abort-dialog', private_metadata: '{}' } });
    const submit = await client.next();
    expect(submit).toMatchObject({ type: 'interactive', accepts_response_payload: true, payload: { type: 'view_submission', view: { callback_id: 'glidepath.abort-dialog' } } });
    client.ws.send(JSON.stringify({ envelope_id: submit.envelope_id, payload: { response_action: 'errors', errors: { reason: 'say why' } } }));
    expect((await submitted).payload).toEqual({ response_action: 'errors', errors: { reason: 'say why' } });

    // One more round trip, so every message sent before it has been read by the stand-in.
    const event = slack.socketMode.event({ type: 'app_home_opened', user: 'U0ALICE', tab: 'home' });
    client.ws.send(JSON.stringify({ envelope_id: (await client.next()).envelope_id }));
    await event;
    expect(slack.socketMode.stats).toMatchObject({ envelopesSent: 4, acks: 4, strayAcks: 2, badMessages: 1, redeliveries: 0 });
  });

  it('sends an Events API envelope again, with retry_attempt, until it is acked; a command nobody acks fails', async () => {
    const slack = await start({ ackTimeoutMs: 50, maxRetries: 3 });
    const client = await connect((await openUrl(slack)).url!);
    await client.next();

    const acked = slack.socketMode.event({ type: 'app_home_opened', user: 'U0ALICE', tab: 'home' });
    const first = await client.next();
    expect(first).toMatchObject({ type: 'events_api', accepts_response_payload: false, retry_attempt: 0, retry_reason: '', payload: { type: 'event_callback', event: { type: 'app_home_opened' } } });
    const second = await client.next();
    expect(second).toMatchObject({ envelope_id: first.envelope_id, retry_attempt: 1, retry_reason: 'timeout' });
    client.ws.send(JSON.stringify({ envelope_id: second.envelope_id }));
    expect(await acked).toMatchObject({ retryAttempt: 1 });

    const ignored = slack.socketMode.event({ type: 'app_home_opened', user: 'U0BOB', tab: 'home' });
    const attempts = [await client.next(), await client.next(), await client.next(), await client.next()].map((m) => m.retry_attempt);
    expect(attempts).toEqual([0, 1, 2, 3]);
    await expect(ignored).rejects.toThrow(/was not acked within 50 ms \(4 deliveries\)/);

    const command = slack.socketMode.slashCommand({ command: '/glidepath', text: 'status', userId: 'U0ALICE', channelId: 'C0CHECKOUT', responseUrl: slack.responseUrl() });
    await client.next();
    await expect(command).rejects.toBeInstanceOf(EnvelopeNotAcked);
    expect(slack.socketMode.stats.redeliveries).toBe(4);
  });

  it('asks the app to reconnect with `disconnect`, closes a connection that stays, and holds envelopes for the next connection', async () => {
    const slack = await start({ closeAfterDisconnectMs: 50 });
    const polite = await connect((await openUrl(slack)).url!);
    await polite.next();
    const leaving = slack.socketMode.disconnect('warning');
    expect(await polite.next()).toMatchObject({ type: 'disconnect', reason: 'warning' });
    polite.ws.close(1000);
    await leaving;

    // Nothing is connected: the envelope waits for the next connection.
    const acked = slack.socketMode.slashCommand({ command: '/glidepath', text: 'help', userId: 'U0ALICE', channelId: 'C0CHECKOUT', responseUrl: slack.responseUrl() });
    const stubborn = await connect((await openUrl(slack)).url!);
    expect(await stubborn.next()).toMatchObject({ type: 'hello' });
    const envelope = await stubborn.next();
    expect(envelope).toMatchObject({ type: 'slash_commands', payload: { text: 'help' } });
    stubborn.ws.send(JSON.stringify({ envelope_id: envelope.envelope_id }));
    await acked;

    // This one ignores `disconnect`: the server closes it.
    await slack.socketMode.disconnect('refresh_requested');
    expect(await stubborn.next()).toMatchObject({ type: 'disconnect', reason: 'refresh_requested' });
    await stubborn.closed;
    expect(slack.socketMode.stats).toMatchObject({ urlsIssued: 2, connections: 2, open: 0 });
  });
});
