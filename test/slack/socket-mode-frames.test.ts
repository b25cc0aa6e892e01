/**
 * Socket Mode frames Slack should never send (issue 20, item 6): a `null`, an Events API envelope
 * without its event, text that is not JSON, an envelope without payload or id. @slack/socket-mode
 * 3.1.0 throws on some of these inside an async listener nobody awaits, and Node ends the process
 * on the unhandled rejection. This test is the Glidepath (the real Bolt receiver, over a real
 * WebSocket to the Slack stand-in): it must see no unhandled rejection, keep answering /healthz,
 * ack the envelopes that have an id (so Slack does not send them again), and still answer a real
 * slash command sent afterwards on the same connection.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { startGlidepath, type Glidepath } from '../../src/glidepath.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { ALICE, CHANNEL, commandsConfig } from '../helpers/commands-rig.js';
import { dropPrefix, testEnv } from '../helpers/glidepath.js';
import { captureLogger, eventually, type CapturedLogger } from '../helpers/slack-harness.js';

const BOT_TOKEN = 'xoxb-frames';
const APP_TOKEN = 'xapp-1-A0GLIDEPATH-frames';

let slack: SlackStandIn;
let log: CapturedLogger;
let cleanups: (() => Promise<void>)[] = [];
const rejections: unknown[] = [];
// Our own record of what vitest would also report: the assertion names the frame that did it.
const onRejection = (reason: unknown) => void rejections.push(reason);

beforeEach(async () => {
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
  slack = await startSlackStandIn({ botToken: BOT_TOKEN, appToken: APP_TOKEN, socketMode: { ackTimeoutMs: 5_000 } });
  log = captureLogger();
  cleanups = [() => slack.close()];
});
afterEach(async () => {
  process.off('unhandledRejection', onRejection);
  for (const c of cleanups.reverse()) await c();
});

async function socketGlidepath(): Promise<Glidepath> {
  const env = testEnv({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.apiUrl });
  cleanups.push(() => dropPrefix(env.REDIS_PREFIX));
  const glidepath = await startGlidepath({
    env,
    config: commandsConfig(),
    roles: ['ingest'],
    host: '127.0.0.1',
    logger: log.logger,
    metrics: createMetrics({ defaultMetrics: false }),
    // `help` reads no cluster: an empty set of cluster clients is enough.
    commands: { clusters: new ClusterClients([]), followTimeoutMs: 5_000 },
  });
  cleanups.push(() => glidepath.close());
  return glidepath;
}

/**
 * Waits for the guard's warning about the n-th malformed frame (each is warned of once), then
 * one turn of the event loop, so a rejection the frame's handling left has reached the process.
 */
async function handled(n: number): Promise<void> {
  await eventually(() => log.lines.filter((l) => l.msg === 'Socket Mode frame ignored: not a well-formed envelope').length >= n || undefined, `the warning about frame ${n}`);
  await new Promise((resolve) => setImmediate(resolve));
}

describe('Socket Mode frames that are not envelopes', () => {
  it('logs and acks malformed frames, stays up and connected, and answers the next slash command', async () => {
    const glidepath = await socketGlidepath();
    await slack.socketMode.whenConnected(1);

    const seen: Record<string, unknown> = {};
    for (const [name, frame] of [
      ['null', 'null'],
      ['not JSON', '{"type":"events_api", this is not json'],
      ['a slash command with neither id nor payload', '{"type":"slash_commands"}'],
    ] as const) {
      await slack.socketMode.sendRaw(frame);
      await handled(Object.keys(seen).length + 1);
      seen[name] = rejections.splice(0).map(String);
    }
    const ackedEvent = await slack.socketMode.sendRaw('{"type":"events_api","envelope_id":"e1","payload":{}}', 'e1');
    await handled(4);
    seen['an events_api envelope without payload.event'] = rejections.splice(0).map(String);
    const ackedCommand = await slack.socketMode.sendRaw('{"type":"slash_commands","envelope_id":"e2"}', 'e2');
    await handled(5);
    seen['a slash command with an id and no payload'] = rejections.splice(0).map(String);
    // An event type the client would use as the name of one of its own internal events.
    const ackedInternal = await slack.socketMode.sendRaw('{"type":"events_api","envelope_id":"e3","payload":{"event":{"type":"ws_message"}}}', 'e3');
    await handled(6);
    seen['an event named ws_message'] = rejections.splice(0).map(String);

    expect(seen).toEqual({
      null: [],
      'not JSON': [],
      'a slash command with neither id nor payload': [],
      'an events_api envelope without payload.event': [],
      'a slash command with an id and no payload': [],
      'an event named ws_message': [],
    });
    expect(ackedEvent?.envelopeId).toBe('e1');
    expect(ackedCommand?.envelopeId).toBe('e2');
    expect(ackedInternal?.envelopeId).toBe('e3');

    const health = await fetch(`${glidepath.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);

    // The same connection still carries real commands.
    expect(slack.socketMode.stats).toMatchObject({ connections: 1, open: 1 });
    const responseUrl = slack.responseUrl();
    await slack.socketMode.slashCommand({ command: '/glidepath', text: 'help', userId: ALICE, channelId: CHANNEL, responseUrl });
    const answer = await eventually(() => slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), 'an answer to /glidepath help');
    expect(String(answer.body.text ?? '')).toContain('`approve &lt;pipeline@stage');
    expect(slack.socketMode.stats).toMatchObject({ connections: 1, open: 1, redeliveries: 0 });

    // Each malformed frame is one warning with a bounded excerpt of the frame.
    const warnings = log.lines.filter((l) => l.level === 40 && l.msg === 'Socket Mode frame ignored: not a well-formed envelope');
    expect(warnings.map((w) => w.envelopeId ?? null)).toEqual([null, null, null, 'e1', 'e2', 'e3']);
    expect(warnings[0]).toMatchObject({ frame: 'null', reason: 'not a JSON object' });
    expect(rejections).toEqual([]);
  }, 30_000);

  it('cuts a long malformed frame in the log', async () => {
    await socketGlidepath();
    await slack.socketMode.whenConnected(1);
    const acked = await slack.socketMode.sendRaw(JSON.stringify({ type: 'events_api', envelope_id: 'e-long', payload: { junk: 'x'.repeat(100_000) } }), 'e-long');
    expect(acked?.envelopeId).toBe('e-long');
    const warning = await eventually(() => log.lines.find((l) => l.envelopeId === 'e-long'), 'a warning for the long frame');
    expect(String(warning.frame).length).toBeLessThan(400);
    expect(warning.frameBytes).toBeGreaterThan(100_000);
    expect(rejections).toEqual([]);
  }, 30_000);

  it("keeps a malformed slash command's verification token and response_url out of the log", async () => {
    await socketGlidepath();
    await slack.socketMode.whenConnected(1);
    const frame = { type: 'slash_commands', envelope_id: 'e-secret', payload: 'not an object', token: 'verification-token-secret', response_url: 'https://hooks.slack.com/commands/secret' };
    await slack.socketMode.sendRaw(JSON.stringify(frame), 'e-secret');
    const warning = await eventually(() => log.lines.find((l) => l.envelopeId === 'e-secret'), 'a warning for the frame');
    expect(String(warning.frame)).toContain('"envelope_id":"e-secret"');
    expect(String(warning.frame)).not.toMatch(/verification-token-secret|hooks\.slack\.com/);
  }, 30_000);
});
