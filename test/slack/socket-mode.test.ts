/**
 * Socket Mode end to end: a whole Glidepath (every role) with SLACK_APP_TOKEN set runs Bolt's real
 * Socket Mode receiver, which opens its socket through the stand-in's apps.connections.open (via
 * SLACK_API_URL) and gets commands, clicks and events as envelopes, acking each. No HTTP request to
 * /slack/events is involved: Glidepath does not even serve it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { startGlidepath, type Glidepath } from '../../src/glidepath.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { APPROVE_ACTION_ID, encodeButtonValue, type ButtonValue } from '../../src/slack/buttons.js';
import { approveAndAbort } from '../../src/slack/render/buttons.js';
import { createSlackClient } from '../../src/slack/client.js';
import { SlackStartupError } from '../../src/slack/errors.js';
import { record, stage as recordStage, target } from './support/records.js';
import { ALICE, BOB, CHANNEL, commandsConfig, OPS_GROUP } from '../helpers/commands-rig.js';
import { dropPrefix, testEnv } from '../helpers/glidepath.js';
import { captureLogger, eventually } from '../helpers/slack-harness.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';

const BOT_TOKEN = 'xoxb-socket';
const APP_TOKEN = 'xapp-1-A0GLIDEPATH-socket';

let clock: FakeClock;
let world: KubeWorld;
let slack: SlackStandIn;
let cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop'], controllers: { rollouts: { podReadyMs: 5000 } } });
  // A generous ack timeout: the acks must arrive, but a busy CI machine need not make Slack's 3 s.
  slack = await startSlackStandIn({ botToken: BOT_TOKEN, appToken: APP_TOKEN, usergroups: { [OPS_GROUP]: [BOB] }, socketMode: { ackTimeoutMs: 20_000 } });
  cleanups = [() => world.close(), () => slack.close()];
});
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function socketGlidepath(appToken = APP_TOKEN): Promise<Glidepath> {
  const env = testEnv({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_APP_TOKEN: appToken, SLACK_API_URL: slack.apiUrl });
  cleanups.push(() => dropPrefix(env.REDIS_PREFIX));
  const glidepath = await startGlidepath({
    env,
    config: commandsConfig(),
    roles: ['ingest', 'worker', 'writer'],
    host: '127.0.0.1',
    logger: captureLogger().logger,
    metrics: createMetrics({ defaultMetrics: false }),
    commands: { clusters: world.clusters, followTimeoutMs: 20_000 },
  });
  cleanups.push(() => glidepath.close());
  return glidepath;
}

/** `/glidepath <text>` typed by `user`, over the socket: resolves with the ack and the response_url answers. */
async function command(text: string, user = ALICE) {
  const responseUrl = slack.responseUrl();
  const ack = await slack.socketMode.slashCommand({ command: '/glidepath', text, userId: user, channelId: CHANNEL, responseUrl });
  const answer = await eventually(() => slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), `an answer to /glidepath ${text}`);
  return { ack, said: String(answer.body.text ?? '') };
}

const rollouts = () => world.store.registry.byKind('Rollout', 'argoproj.io');

/** A canary paused at its indefinite pause step, the release record that shows it, and the paused reply with its buttons. */
async function pausedCanary(): Promise<{ value: ButtonValue; reply: { ts: string; text: string; blocks: unknown[] } }> {
  world.store.create(rollouts(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
  await clock.advance(0);
  world.store.mutate(rollouts(), 'shop', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
  await clock.advance(6000);
  const live = world.store.get(rollouts(), 'shop', 'checkout');
  expect(live.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
  const value: ButtonValue = { v: 1, p: 'checkout', r: 'rel-1', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', g: live.metadata.generation!, h: live.status.currentPodHash as string, s: 1 };
  return { value, reply: await postPausedReply(value) };
}

async function postPausedReply(value: ButtonValue): Promise<{ ts: string; text: string; blocks: unknown[] }> {
  const text = 'checkout@prod is paused (step 2/6, weight 20%) and waits for approval.';
  const blocks = [{ type: 'section', text: { type: 'mrkdwn', text } }, { type: 'actions', block_id: 'glidepath.approval', elements: approveAndAbort(value, 'prod/shop/checkout') }];
  const res = await createSlackClient(BOT_TOKEN, slack.apiUrl).chat.postMessage({ channel: CHANNEL, text, blocks: blocks as never });
  return { ts: res.ts!, text, blocks };
}

describe('Socket Mode against the Slack stand-in', () => {
  it('takes commands, a click and an event over the socket, acks each, and keeps working after Slack asks it to reconnect', async () => {
    const glidepath = await socketGlidepath();
    expect(glidepath.slack?.app?.mode).toBe('socket');
    // The socket came from the stand-in's apps.connections.open, with the app-level token.
    expect(slack.socketMode.stats).toMatchObject({ urlsIssued: 1, connections: 1, open: 1 });
    expect((await fetch(`${glidepath.url}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);

    const help = await command('help');
    expect(help.ack).toMatchObject({ retryAttempt: 0, payload: undefined });
    expect(help.said).toContain("`approve &lt;pipeline@stage | cluster/namespace/rollout | cluster/namespace/appset&gt; [--break-glass \"why\"]`");

    const { value, reply } = await pausedCanary();
    const paused = target('checkout', { generation: value.g!, podHash: value.h!, phase: 'Paused', pause: { reason: 'CanaryPauseStep' }, step: { index: 1, count: 6 }, weight: 20, application: 'checkout-prod' });
    await glidepath.store.update('checkout', 'rel-1', () => ({ next: record({ releaseId: 'rel-1', status: 'Paused', stages: [recordStage('prod', 'Paused', [paused])] }), result: null }));
    const status = await command('status checkout');
    expect(status.said).toContain('*checkout* release `rel-1` — Paused');
    expect(status.said).toContain('waiting for approval: prod/shop/checkout at step 2/6');

    // Approve on the paused reply, clicked by a member of an allowed group: the canary moves on.
    const clicked = await slack.socketMode.blockAction({
      actionId: APPROVE_ACTION_ID,
      value: encodeButtonValue(value),
      userId: BOB,
      channelId: CHANNEL,
      messageTs: reply.ts,
      messageText: reply.text,
      messageBlocks: reply.blocks,
      responseUrl: slack.responseUrl(),
    });
    expect(clicked.retryAttempt).toBe(0);
    const updated = await eventually(() => {
      const m = slack.transcript.find(CHANNEL, reply.ts);
      return m && m.edits.length > 0 ? m : undefined;
    }, 'the clicked message to be updated');
    expect(JSON.stringify(updated.blocks)).toContain(`approved step 2 of prod/shop/checkout: the canary moves on (by <@${BOB}>)`);
    expect(world.store.get(rollouts(), 'shop', 'checkout').status.pauseConditions ?? []).toHaveLength(0);
    expect(await glidepath.slack!.commands!.audit.list({ limit: 10 })).toEqual(expect.arrayContaining([expect.objectContaining({ actor: expect.objectContaining({ slackUserId: BOB }), action: 'approve', result: 'done' })]));

    // An Events API envelope: opening the App Home publishes it.
    await slack.socketMode.event({ type: 'app_home_opened', user: ALICE, channel: 'D0ALICE', tab: 'home' });
    await eventually(() => slack.transcript.homeViews.get(ALICE), 'the App Home to be published');

    // Slack recycles the connection: the client closes it, asks apps.connections.open again and reconnects.
    await slack.socketMode.disconnect('refresh_requested');
    expect(slack.socketMode.stats.open).toBe(0);
    await slack.socketMode.whenConnected(2);
    expect(slack.socketMode.stats).toMatchObject({ urlsIssued: 2, connections: 2, open: 1 });
    const after = await command('help');
    expect(after.said).toContain('`approve &lt;pipeline@stage');
    // Every envelope was acked once, on time: nothing was sent twice.
    expect(slack.socketMode.stats).toMatchObject({ redeliveries: 0, strayAcks: 0, badMessages: 0 });
    expect(slack.socketMode.stats.acks).toBe(slack.socketMode.stats.envelopesSent);
  }, 60_000);

  it('stops start-up with a message naming SLACK_APP_TOKEN when Slack refuses it', async () => {
    const err = await socketGlidepath('xapp-1-wrong').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlackStartupError);
    expect((err as Error).message).toContain('apps.connections.open: invalid_auth');
    expect((err as Error).message).toContain('SLACK_APP_TOKEN is the app-level token (xapp-…)');
    expect(slack.socketMode.stats.connections).toBe(0);
  });
});
