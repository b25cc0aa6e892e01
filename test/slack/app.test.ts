import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { ReleaseStore } from '../../src/releases/store/store.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import { createSlackApp, type SlackApp } from '../../src/slack/app.js';
import { SlackStartupError } from '../../src/slack/errors.js';
import { NOT_CONFIGURED } from '../../src/slack/listeners/surface.js';
import { LISTENER_GROUPS } from '../../src/slack/listeners/index.js';
import type { ListenerGroup } from '../../src/slack/listeners/types.js';
import { APPROVE_ACTION_ID, ABORT_ACTION_ID } from '../../src/slack/buttons.js';
import { createKeys } from '../../src/store/keys.js';
import { captureLogger, deletePrefix, eventually, redisClient, serveSlackEvents, testPrefix } from '../helpers/slack-harness.js';
import { pipelineConfig, record } from './support/records.js';

const SECRET = 'test-signing-secret-0123456789';
const config: ConfigFile = configFileSchema.parse({ clusters: [{ name: 'prod', argocdNamespaces: ['argocd'] }], pipelines: [pipelineConfig()] });

let redis: Redis;
const prefix = testPrefix();
let store: ReleaseStore;
beforeAll(() => {
  redis = redisClient();
  store = new ReleaseStore(redis, createKeys(prefix), { finishedTtlMs: 60_000 });
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function boot(listeners?: readonly ListenerGroup[]): Promise<{ slack: SlackStandIn; app: SlackApp; sender: SignedSender; log: ReturnType<typeof captureLogger> }> {
  const slack = await startSlackStandIn({ botToken: 'xoxb-test' });
  cleanups.push(() => slack.close());
  const log = captureLogger();
  const app = await createSlackApp({
    env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: SECRET, SLACK_APP_TOKEN: undefined, SLACK_API_URL: slack.apiUrl },
    config,
    releases: store,
    logger: log.logger,
    ...(listeners ? { listeners } : {}),
  });
  await app.start();
  cleanups.push(() => app.stop());
  const server = await serveSlackEvents(app.handleSlackRequest!);
  cleanups.push(() => server.close());
  return { slack, app, log, sender: new SignedSender({ url: server.url, signingSecret: SECRET }) };
}

describe('Slack app', () => {
  it('checks the bot token at start-up and says what to fix', async () => {
    const slack = await startSlackStandIn({ botToken: 'xoxb-right' });
    cleanups.push(() => slack.close());
    const err = await createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-wrong', SLACK_SIGNING_SECRET: SECRET, SLACK_APP_TOKEN: undefined, SLACK_API_URL: slack.apiUrl },
      config,
      releases: store,
      logger: captureLogger().logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlackStartupError);
    expect((err as Error).message).toContain(`Slack rejected SLACK_BOT_TOKEN at ${slack.apiUrl} (auth.test: invalid_auth)`);
  });

  it('tells an unreachable Slack from a rejected token at start-up', async () => {
    // A port nothing listens on: no Slack answers, so nothing can be said of the token.
    const err = await createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: SECRET, SLACK_APP_TOKEN: undefined, SLACK_API_URL: 'http://127.0.0.1:9/api/' },
      config,
      releases: store,
      logger: captureLogger().logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlackStartupError);
    expect((err as SlackStartupError).code).toBe('glidepath_slack_unreachable');
    expect((err as Error).message).toMatch(/^Slack at http:\/\/127\.0\.0\.1:9\/api\/ is unreachable \(auth\.test: [^)]+\); the token was not checked/);
    expect((err as Error).message).not.toMatch(/rejected/);
  });

  it('refuses to start without a way to receive Slack requests', async () => {
    const err = await createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: undefined, SLACK_API_URL: 'http://127.0.0.1:9/api/' },
      config,
      releases: store,
      logger: captureLogger().logger,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('Set SLACK_SIGNING_SECRET');
  });

  it('uses Socket Mode when SLACK_APP_TOKEN is set, with no HTTP endpoint to mount', async () => {
    const slack = await startSlackStandIn({ botToken: 'xoxb-test' });
    cleanups.push(() => slack.close());
    const app = await createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: 'xapp-1-test', SLACK_API_URL: slack.apiUrl },
      config,
      releases: store,
      logger: captureLogger().logger,
    });
    expect(app.mode).toBe('socket');
    expect(app.handleSlackRequest).toBeUndefined();
  });

  it('answers an Approve or Abort click honestly when no cluster is configured: nothing changed', async () => {
    const { slack, sender } = await boot();
    for (const actionId of [APPROVE_ACTION_ID, ABORT_ACTION_ID]) {
      const responseUrl = slack.responseUrl();
      const res = await sender.blockAction({ actionId, value: '{}', userId: 'U1', channelId: 'C0CHECKOUT', messageTs: '1.000001', responseUrl });
      expect(res.status).toBe(200);
      const answer = await eventually(() => slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), 'the ephemeral answer');
      expect(answer.body).toMatchObject({ response_type: 'ephemeral', replace_original: false, text: NOT_CONFIGURED });
    }
  });

  it('rejects requests with a bad signature or a replayed timestamp', async () => {
    const { slack, sender } = await boot();
    const input = { actionId: APPROVE_ACTION_ID, value: '{}', userId: 'U1', channelId: 'C1', messageTs: '1.000001', responseUrl: slack.responseUrl() };
    expect((await sender.blockAction(input, { secret: 'not-the-secret' })).status).toBe(401);
    expect((await sender.blockAction(input, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })).status).toBe(401);
    expect(slack.transcript.responses).toEqual([]);
  });

  it('publishes the App Home with the active releases from the store', async () => {
    await store.update('checkout', 'rel-7', () => ({ next: record({ releaseId: 'rel-7' }), result: null }));
    const { slack, sender } = await boot();
    const res = await sender.event({ type: 'app_home_opened', user: 'U1', channel: 'D1', tab: 'home', event_ts: '1.1' });
    expect(res.status).toBe(200);
    const view = await eventually(() => slack.transcript.homeViews.get('U1'), 'the Home view');
    expect(JSON.stringify(view)).toContain('`rel-7` · InProgress');
  });

  it('serves signed slash commands, and a listener failure reaches the one error sink without a stack in Slack', async () => {
    const failing: ListenerGroup = {
      name: 'failing',
      register(app) {
        app.command('/glidepath', async ({ ack }) => {
          await ack();
          throw new Error('kube exploded');
        });
      },
    };
    const { slack, sender, log } = await boot([...LISTENER_GROUPS.filter((g) => g.name !== 'glidepath-command'), failing]);
    const res = await sender.slashCommand({ command: '/glidepath', text: 'status', userId: 'U1', channelId: 'C1', responseUrl: slack.responseUrl() });
    expect(res.status).toBe(200);
    expect(res.body).not.toContain('kube exploded');
    const line = await eventually(() => log.lines.find((l) => l.msg === 'Slack listener failed'), 'the error log line');
    expect(line).toMatchObject({ command: '/glidepath', user: 'U1', err: { message: 'kube exploded' } });
    expect(slack.transcript.ephemerals).toEqual([]);
  });
});
