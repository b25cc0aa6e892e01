/**
 * Everything real for the commands: Redis (own prefix), the real Bolt app over HTTP with the
 * /glidepath listener and the buttons, the Slack stand-in, and a simulated cluster reached by
 * client-node as Glidepath's service account (RBAC from deploy/rbac).
 */
import type { Redis } from 'ioredis';
import type { AuditLog, StoredAuditEntry } from '../../src/audit/audit-log.js';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { startGlidepath, type Glidepath } from '../../src/glidepath.js';
import type { ClusterClients } from '../../src/kube/clusters.js';
import { createMetrics } from '../../src/obs/metrics.js';
import type { ReleaseStore } from '../../src/releases/store/store.js';
import type { SlackApp } from '../../src/slack/app.js';
import type { Keys } from '../../src/store/keys.js';
import { startSlackStandIn, type SlackStandIn, type SlackStandInOptions } from '../../sandbox/slack/server.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import type { ResponseUrlPost } from '../../sandbox/slack/transcript.js';
import { dropPrefix, testEnv } from './glidepath.js';
import { captureLogger, eventually, type CapturedLogger } from './slack-harness.js';

export const CHANNEL = 'C0CHECKOUT';
export const ALICE = 'U0ALICE';
export const BOB = 'U0BOB';
export const MALLORY = 'U0MALLORY';
export const OPS_GROUP = 'S0OPS';
const SECRET = 'commands-rig-signing-secret';

/** Pipelines over cluster `prod` (and `prod-no-status`, whose account lacks rollouts/status). */
export function commandsConfig(): ConfigFile {
  const perms = { approve: [ALICE, OPS_GROUP], abort: [ALICE], promote: [ALICE] };
  return configFileSchema.parse({
    clusters: [{ name: 'prod' }, { name: 'prod-no-status' }, { name: 'prod-no-promote' }],
    pipelines: [
      {
        name: 'checkout',
        channel: CHANNEL,
        stages: [
          { name: 'prod', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app.kubernetes.io/name=checkout' }, permissions: perms },
          { name: 'pay', cluster: 'prod', rollouts: { namespace: 'pay', selector: 'app.kubernetes.io/name=checkout' }, permissions: { ...perms, approve: [ALICE, BOB], requireTwoApprovers: true } },
          { name: 'locked', cluster: 'prod', rollouts: { namespace: 'locked', selector: 'app.kubernetes.io/name=checkout' } },
          { name: 'norbac', cluster: 'prod-no-status', rollouts: { namespace: 'shop', selector: 'app.kubernetes.io/name=checkout' }, permissions: perms },
          { name: 'rolling', cluster: 'prod', applicationSet: { namespace: 'argocd', name: 'checkout', step: 3 }, permissions: perms },
        ],
      },
      {
        name: 'shop',
        channel: CHANNEL,
        stages: [
          { name: 'staging', cluster: 'prod', kargo: { project: 'kargo-demo', stage: 'staging' }, permissions: perms },
          { name: 'prod', cluster: 'prod', kargo: { project: 'kargo-demo', selector: 'tier=prod' }, permissions: perms },
        ],
      },
    ],
  });
}

export interface CommandsRig {
  slack: SlackStandIn;
  redis: Redis;
  keys: Keys;
  audit: AuditLog;
  store: ReleaseStore;
  log: CapturedLogger;
  app: SlackApp;
  /** Sends `/glidepath <text>` as `user`; returns the response_url's answers as they arrive. */
  command(text: string, user?: string): Promise<{ responses: () => ResponseUrlPost[]; first: () => Promise<ResponseUrlPost> }>;
  click(input: { actionId: string; value: string; user?: string; messageTs?: string; threadTs?: string; messageText?: string; messageBlocks?: unknown[]; ephemeral?: boolean }): Promise<{ responses: () => ResponseUrlPost[]; first: () => Promise<ResponseUrlPost> }>;
  submitView(view: Record<string, unknown>, user?: string): Promise<void>;
  auditEntries(): Promise<StoredAuditEntry[]>;
  close(): Promise<void>;
}

export async function startCommandsRig(options: { clusters: ClusterClients; now?: () => number; followTimeoutMs?: number; config?: ConfigFile; slackUsers?: SlackStandInOptions['users'] }): Promise<CommandsRig> {
  const config = options.config ?? commandsConfig();
  const slack = await startSlackStandIn({ botToken: 'xoxb-commands', usergroups: { [OPS_GROUP]: [BOB] }, ...(options.slackUsers ? { users: options.slackUsers } : {}) });
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-commands', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: slack.apiUrl });
  const log = captureLogger();
  // An ingest-only Glidepath: the Bolt app with /glidepath and the buttons, acting on the stand-in clusters.
  const glidepath: Glidepath = await startGlidepath({
    env,
    config,
    roles: ['ingest'],
    host: '127.0.0.1',
    logger: log.logger,
    metrics: createMetrics({ defaultMetrics: false }),
    commands: { clusters: options.clusters, followTimeoutMs: options.followTimeoutMs ?? 20_000, ...(options.now ? { now: options.now } : {}) },
  });
  const commands = glidepath.slack!.commands!;
  const app = glidepath.slack!.app!;
  const redis = glidepath.redis.requests;
  const { keys, store } = glidepath;
  const audit = commands.audit;
  const sender = new SignedSender({ url: `${glidepath.url}/slack/events`, signingSecret: SECRET });
  const answers = (url: string) => {
    const responses = () => slack.transcript.responses.filter((r) => url.endsWith(r.id));
    return { responses, first: () => eventually(() => responses()[0], `an answer at ${url}`) };
  };
  return {
    slack,
    redis,
    keys,
    audit,
    store,
    log,
    app,
    async command(text, user = ALICE) {
      const responseUrl = slack.responseUrl();
      const res = await sender.slashCommand({ command: '/glidepath', text, userId: user, channelId: CHANNEL, responseUrl });
      if (res.status !== 200) throw new Error(`slash command answered ${res.status}: ${res.body}`);
      return answers(responseUrl);
    },
    async click(input) {
      const responseUrl = slack.responseUrl();
      const res = await sender.blockAction({
        actionId: input.actionId,
        value: input.value,
        userId: input.user ?? ALICE,
        channelId: CHANNEL,
        messageTs: input.messageTs ?? '1.000001',
        ...(input.threadTs ? { threadTs: input.threadTs } : {}),
        responseUrl,
        ...(input.messageText !== undefined ? { messageText: input.messageText } : {}),
        ...(input.messageBlocks ? { messageBlocks: input.messageBlocks } : {}),
        ...(input.ephemeral ? { ephemeral: true } : {}),
      });
      if (res.status !== 200) throw new Error(`click answered ${res.status}: ${res.body}`);
      return answers(responseUrl);
    },
    async submitView(view, user = ALICE) {
      const res = await sender.viewSubmission({ userId: user, view });
      if (res.status !== 200) throw new Error(`view submission answered ${res.status}: ${res.body}`);
    },
    auditEntries: () => audit.list({ limit: 100 }),
    async close() {
      await glidepath.close();
      await slack.close();
      await dropPrefix(env.REDIS_PREFIX);
    },
  };
}

/** Text of a response_url answer. */
export function said(post: ResponseUrlPost): string {
  return String(post.body.text ?? '');
}
