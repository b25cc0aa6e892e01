/**
 * `npm run sandbox`: Glidepath's main job with no accounts anywhere. A simulated cluster pair
 * (Argo CD, Argo Rollouts, Kargo and their notifications engines) sends its facts to a real
 * Glidepath, which keeps release threads in a Slack stand-in; the terminal shows the threads
 * as a person would read them. A release of `checkout` starts at once; when it pauses for
 * approval, the sandbox clicks Approve as a person would.
 *
 *   SANDBOX_SPEED    how many times faster than real time the clusters run (default 20)
 *   SANDBOX_SECONDS  stop after this many seconds (default: run until Ctrl-C)
 *   SANDBOX_DIR      where the kubeconfig and config are written (default .sandbox)
 *   PORT             Glidepath's port (default 3000; 0 picks a free one)
 *   SANDBOX_SLACK    http (default: signed requests to /slack/events) or socket (Socket Mode) (the browser page needs http)
 *   SANDBOX_WEB_PORT the browser page's port (default 3001; 0, or PORT=0, picks a free one)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { parseEnv } from '../src/config/env.js';
import { parseConfigFile } from '../src/config/file.js';
import { startGlidepath } from '../src/glidepath.js';
import { KubeApi } from '../src/kube/api.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, kubeConfigFor } from '../src/kube/clusters.js';
import { approveCanaryStep } from '../src/kube/rollout-operations.js';
import { createLogger } from '../src/obs/logger.js';
import { createMetrics } from '../src/obs/metrics.js';
import { APPROVE_ACTION_ID, type ButtonValue } from '../src/slack/buttons.js';
import { describeMessage } from './describe-message.js';
import { ensureRedis } from './ensure-redis.js';
import { FakeClock } from './kube/clock.js';
import { startSampleWorld } from './kube/world.js';
import { sampleWorldConfig } from './kube/world-config.js';
import { sandboxSlackMode, slackModeEnv, slackSenderFor } from './slack/mode.js';
import { startSlackStandIn } from './slack/server.js';
import { SignedSender } from './slack/sender.js';
import { pipelineChannels, sandboxWebPort, startSandboxWeb } from './web/server.js';
import type { TranscriptMessage } from './slack/transcript.js';

const SPEED = Number(process.env.SANDBOX_SPEED ?? 20);
const SECONDS = Number(process.env.SANDBOX_SECONDS ?? 0);
const BOT_TOKEN = 'xoxb-sandbox-0000000000';
const SIGNING_SECRET = 'sandbox-signing-secret';
const TOKENS = { dev: `dev-${randomBytes(12).toString('hex')}`, prod: `prod-${randomBytes(12).toString('hex')}` };
/** CI's own token, bound to the checkout pipeline (a cluster's token cannot announce releases). */
const CI_TOKEN = `ci-${randomBytes(12).toString('hex')}`;
const READ_TOKEN = `read-${randomBytes(12).toString('hex')}`;
const YOU = 'U0SANDBOX';

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

async function main(): Promise<void> {
  // How Slack reaches Glidepath: signed HTTP requests, or Socket Mode (sandbox/slack/mode.ts).
  const SLACK_MODE = sandboxSlackMode(process.env.SANDBOX_SLACK);
  const redis = await ensureRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const slack = await startSlackStandIn({ botToken: BOT_TOKEN, users: { [YOU]: { name: 'you', real_name: 'You (sandbox)' } }, usergroups: { S0SANDBOXSRE: [YOU] } });
  const dir = resolve(process.env.SANDBOX_DIR ?? '.sandbox');
  mkdirSync(dir, { recursive: true });
  const kubeconfigPath = resolve(dir, 'kubeconfig');
  // In the sandbox you are the SRE group everywhere, so your clicks act (real deployments list people per stage).
  const config = parseConfigFile(sampleWorldConfig({ kubeconfigPath, approversEverywhere: ['S0SANDBOXSRE'] }), '.sandbox/config.yaml');
  writeFileSync(resolve(dir, 'config.yaml'), stringify(config));
  const env = parseEnv({
    PORT: process.env.PORT ?? '3000',
    REDIS_URL: redis.url,
    REDIS_PREFIX: `{glidepath-sandbox-${randomBytes(4).toString('hex')}}`,
    INGEST_TOKENS: `dev=${TOKENS.dev},prod=${TOKENS.prod}`,
    CI_TOKENS: `checkout=${CI_TOKEN}`,
    API_READ_TOKEN: READ_TOKEN,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...slackModeEnv(SLACK_MODE),
  });
  const logger = createLogger(env.LOG_LEVEL);
  const metrics = createMetrics();
  // The whole product, as `npm start` builds it; only its Slack URL and kubeconfig point at stand-ins.
  const app = await startGlidepath({ env, config, logger, metrics, host: '127.0.0.1' });

  // The clusters run on a clock SPEED times faster than the wall clock.
  const clock = new FakeClock(Date.now());
  let ticking = Promise.resolve();
  const ticker = setInterval(() => {
    ticking = ticking.then(() => clock.advance(100 * SPEED));
  }, 100);
  const world = await startSampleWorld({
    clock,
    kubeconfigPath,
    webhooks: { rolloutsUrl: `${app.url}/v1/facts/rollouts`, argocdUrl: `${app.url}/v1/facts/argocd`, tokens: TOKENS },
    heartbeatEveryMs: 10 * 60_000,
  });

  // The page signs what a person does and posts it to /slack/events, as Slack does in HTTP mode.
  const signed = new SignedSender({ url: `${app.url}/slack/events`, signingSecret: SIGNING_SECRET });
  // The browser page (sandbox/web): a local Slack where you watch the threads and act.
  const web = await startSandboxWeb({ slack, sender: signed, you: { id: YOU, name: 'you' }, channels: pipelineChannels(config.pipelines), port: sandboxWebPort(process.env) });
  console.log(`Open ${web.url} — a local Slack: watch the release threads, click Approve, type /glidepath help\n`);

  console.log(`Glidepath sandbox — clusters run ${SPEED}× faster than real time
  Glidepath      ${app.url}   (GET /v1/releases?pipeline=checkout with "Authorization: Bearer ${READ_TOKEN}")
  Slack stand-in ${slack.url}   (${SLACK_MODE === 'socket' ? 'Socket Mode: Glidepath holds a WebSocket to it; SANDBOX_SLACK=http for signed requests' : 'signed requests to /slack/events; SANDBOX_SLACK=socket for Socket Mode'})
  clusters       kubectl --kubeconfig ${kubeconfigPath} get rollouts -A   (contexts dev, prod)
  config         ${resolve(dir, 'config.yaml')}
`);

  // CI announces the release, then the commit reaches the clusters through Argo CD.
  const releaseId = 'rel-1.29.0';
  await fetch(`${app.url}/v1/releases`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CI_TOKEN}` },
    body: JSON.stringify({ releaseId, pipeline: 'checkout', images: ['registry.example.com/shop/checkout:1.29.0'], commit: 'a1b2c3d4e5f6', author: 'you', pullRequestUrl: 'https://git.example.com/shop/checkout/pull/129' }),
  });
  world.releaseCheckout('1.29.0', releaseId);
  console.log(`→ CI announced ${releaseId}; the commit is on its way through Argo CD\n`);

  const sender = slackSenderFor(SLACK_MODE, { glidepathUrl: app.url, signingSecret: SIGNING_SECRET, slack });
  const shown = new Map<string, string>();
  const clicked = new Set<string>();

  const approve = async (channel: string, message: TranscriptMessage, value: ButtonValue): Promise<void> => {
    console.log(`→ you click Approve on ${value.c}/${value.ns}/${value.n} (step ${(value.s ?? 0) + 1})`);
    const answered = slack.transcript.responses.length + slack.transcript.ephemerals.length;
    await sender
      .blockAction({ actionId: APPROVE_ACTION_ID, value: JSON.stringify(value), userId: YOU, channelId: channel, messageTs: message.ts, threadTs: message.threadTs, responseUrl: slack.responseUrl() })
      .catch((err: unknown) => console.log(`  (the click did not reach Glidepath: ${err instanceof Error ? err.message : String(err)})`));
    // Should Glidepath refuse (say, the Rollout moved on), the sandbox resumes the Rollout the way
    // `kubectl argo rollouts promote` does, so the demo release still goes on.
    setTimeout(() => {
      const answers = [...slack.transcript.responses.map((r) => String(r.body.text ?? '')), ...slack.transcript.ephemerals.map((e) => e.text)];
      if (answers.length > answered) console.log(indent(`Glidepath answered you: ${answers.slice(answered).join(' / ')}`, '  '));
      void (async () => {
        const api = new KubeApi(value.c, kubeConfigFor({ name: value.c, kubeconfigContext: value.c, kubeconfigPath }), DEFAULT_REQUEST_TIMEOUT_MS);
        // Only if it still waits at the step you clicked (a later timed pause resumes on its own):
        // approveCanaryStep refuses otherwise, and the refusal is only printed.
        const result = await approveCanaryStep(api, value.ns, value.n, { generation: value.g ?? 0, podHash: value.h ?? '', stepIndex: value.s ?? 0 });
        if (result.kind === 'refused') {
          console.log(`  (not resumed: ${result.reason})`);
          return;
        }
        console.log(`→ still paused: resumed ${value.c}/${value.ns}/${value.n} through the cluster API (as kubectl argo rollouts promote does)`);
      })().catch((err: unknown) => console.log(`  (could not resume: ${err instanceof Error ? err.message : String(err)})`));
    }, 3_000);
  };

  const show = (): void => {
    for (const pipeline of config.pipelines) {
      for (const parent of slack.transcript.messages(pipeline.channel)) {
        for (const m of [parent, ...parent.replies]) {
          const text = describeMessage(m.text, m.blocks);
          if (shown.get(m.ts) === text) continue;
          const first = !shown.has(m.ts);
          shown.set(m.ts, text);
          const label = m === parent ? (first ? 'new thread' : 'thread updated') : 'reply';
          console.log(`[${new Date().toISOString().slice(11, 19)}] ${pipeline.name} ${label}:\n${indent(text, m === parent ? '  │ ' : '  ↳ ')}\n`);
          const actions = (m.blocks as { type?: string; elements?: { action_id?: string; value?: string }[] }[]).find((b) => b.type === 'actions');
          const button = actions?.elements?.find((e) => e.action_id === APPROVE_ACTION_ID);
          if (button?.value && !clicked.has(m.ts)) {
            clicked.add(m.ts);
            const value = JSON.parse(button.value) as ButtonValue;
            setTimeout(() => void approve(pipeline.channel, m, value), 5_000);
          }
        }
      }
    }
  };
  const printer = setInterval(show, 1_000);

  const stop = async (): Promise<void> => {
    clearInterval(printer);
    clearInterval(ticker);
    show();
    await web.close();
    await world.stop();
    await app.close();
    await slack.close();
    // The sandbox's keys go with it (its prefix is its own; nothing else in that Redis is touched).
    const cleanup = connectRedis(redis.url, 'worker');
    await deleteKeysWithPrefix(cleanup, env.REDIS_PREFIX).catch(() => undefined);
    cleanup.disconnect();
    redis.child?.kill();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  if (SECONDS > 0) setTimeout(() => void stop(), SECONDS * 1000);
}

main().catch((err: unknown) => {
  console.error(`sandbox: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
