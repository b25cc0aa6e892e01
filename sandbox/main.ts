/**
 * `npm run sandbox`: Glidepath's main job with no accounts anywhere. A simulated cluster pair
 * (Argo CD, Argo Rollouts, Kargo and their notifications engines) sends its facts to a real
 * Glidepath, which keeps release threads in a Slack stand-in; the terminal tells a story
 * (sandbox/story/story.ts) and shows the threads as a person would read them, each block naming
 * the release it belongs to.
 *
 *   --speed N / SANDBOX_SPEED   how much faster than the readable pace (default 1; the clusters run 20×N real time)
 *   --seconds N / SANDBOX_SECONDS  stop after this many seconds (default: run until Ctrl-C); implies --auto
 *   --auto / SANDBOX_AUTO=1  the sandbox decides for you after a while (default: the story waits
 *                    at each decision until you act in the page or press Enter in the terminal)
 *   SANDBOX_DIR      where the kubeconfig and config are written (default .sandbox)
 *   PORT             Glidepath's port (default 3000; 0 picks a free one)
 *   SANDBOX_WEB_PORT the browser page's port (default 3001; 0, or PORT=0, picks a free one)
 *   SANDBOX_SLACK    http (default: signed requests to /slack/events) or socket (Socket Mode; the page needs http)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { parseEnv } from '../src/config/env.js';
import { parseConfigFile, type ConfigFile } from '../src/config/file.js';
import { startGlidepath } from '../src/glidepath.js';
import { createLogger } from '../src/obs/logger.js';
import { createMetrics } from '../src/obs/metrics.js';
import { ensureRedis } from './ensure-redis.js';
import { FakeClock } from './kube/clock.js';
import { DEFAULT_CONTEXT, GLIDEPATH_SANDBOX_TOKEN, KUBECONFIG_CONTEXTS, startSampleWorld } from './kube/world.js';
import { sampleWorldConfig } from './kube/world-config.js';
import { sandboxSlackMode, slackModeEnv, slackSenderFor } from './slack/mode.js';
import { SignedSender } from './slack/sender.js';
import { startSlackStandIn } from './slack/server.js';
import { Actor } from './story/actor.js';
import { Decisions } from './story/decisions.js';
import { GlidepathView } from './story/glidepath-view.js';
import { parseSandboxOptions } from './story/options.js';
import { ACT_AS_PEOPLE_ON, KUBERNETES_PEOPLE, MENTION_NAMES, PEOPLE, THE_SANDBOX, YOU } from './story/people.js';
import { TranscriptPrinter } from './story/printer.js';
import { Story, storyAnalysis } from './story/story.js';
import { Teardown } from './story/teardown.js';
import { pipelineChannels, sandboxWebPort, startSandboxWeb } from './web/server.js';

const BOT_TOKEN = 'xoxb-sandbox-0000000000';
const SIGNING_SECRET = 'sandbox-signing-secret';
const TOKENS = { dev: `dev-${randomBytes(12).toString('hex')}`, prod: `prod-${randomBytes(12).toString('hex')}` };
/** CI's own token, bound to the checkout pipeline (a cluster's token cannot announce releases). */
const CI_TOKEN = `ci-${randomBytes(12).toString('hex')}`;
const READ_TOKEN = `read-${randomBytes(12).toString('hex')}`;
const CHANNELS = { checkout: 'C0SANDBOX1', checkoutAppSet: 'C0SANDBOX2', ledger: 'C0SANDBOX3', checkoutKargo: 'C0SANDBOX4' };
/** Cluster time per wall-clock time at --speed 1: a canary step takes seconds, not minutes. */
const CLUSTER_PACE = 20;

const say = (line: string): void => console.log(line);

function startError(err: unknown, port: string): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EADDRINUSE') return `port ${port} is in use: stop what uses it, or start with PORT=0 to pick a free port`;
  return err instanceof Error ? err.message : String(err);
}

/** A port free now on 127.0.0.1 (the Kargo API stand-in takes it moments later). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** The banner's lines on who you are in the cluster, as the config's identity map and clusters say. */
function whoYouAre(config: ConfigFile): string {
  const asPerson = config.clusters.filter((c) => c.authorization !== 'config').map((c) => c.name);
  const asGlidepath = config.clusters.filter((c) => c.authorization === 'config').map((c) => c.name);
  const line = (id: string, name: string): string => {
    const k = config.identities.users[id];
    return k ? `    @${name} in Slack → Kubernetes user ${k.user}, groups ${k.groups.join(', ') || '(none)'}` : `    @${name} in Slack → no Kubernetes identity`;
  };
  const where = asPerson.length > 0
    ? `your clicks on ${asPerson.join(', ')} are sent as you (Impersonate-User/Group; the approvers and that cluster's RBAC decide)${asGlidepath.length > 0 ? `, on ${asGlidepath.join(', ')} as Glidepath` : ''}`
    : 'every write is sent as Glidepath';
  return `  you in the cluster   ${where}\n${line(YOU, PEOPLE.you.name)}\n${line(THE_SANDBOX, PEOPLE.sandbox.name)}   (acting for you with --auto)`;
}

async function main(): Promise<void> {
  const options = parseSandboxOptions(process.argv.slice(2), process.env);
  // How Slack reaches Glidepath: signed HTTP requests, or Socket Mode (sandbox/slack/mode.ts).
  const slackMode = sandboxSlackMode(process.env.SANDBOX_SLACK);
  const teardown = new Teardown();
  const redis = await ensureRedis(options.redisUrl);
  if (redis.child) teardown.add('redis-server', () => void redis.child?.kill());
  const prefix = `{glidepath-sandbox-${randomBytes(4).toString('hex')}}`;
  // The sandbox's keys go with it (its prefix is its own; nothing else in that Redis is touched).
  teardown.add(`the Redis keys under ${prefix}`, async () => {
    const cleanup = connectRedis(redis.url, 'worker');
    try {
      await deleteKeysWithPrefix(cleanup, prefix);
    } finally {
      cleanup.disconnect();
    }
  });
  // One clean-up, however many signals: Ctrl-C in a terminal reaches every process of the group,
  // so the node process hears SIGINT from the terminal and again from npm, which relays it. A
  // second signal waits for the clean-up under way instead of exiting before the keys are gone.
  let stopping: Promise<void> | undefined;
  const stop = async (code: number): Promise<never> => {
    if (stopping) say('sandbox: still stopping (removing what it started)…');
    stopping ??= teardown.run(say);
    await stopping;
    process.exit(code);
  };
  // `on`, not `once`: with no listener left, a second signal would kill the process mid-clean-up.
  // Heard from here on, so a Ctrl-C during start-up also removes what had started.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    // You, and the sandbox's own user for what it does with --auto: both in the SRE group.
    const users = Object.fromEntries(Object.values(PEOPLE).map((p) => [p.id, { name: p.name, real_name: p.realName }]));
    const slack = await startSlackStandIn({ botToken: BOT_TOKEN, users, usergroups: { S0SANDBOXSRE: [YOU, THE_SANDBOX] } });
    teardown.add('the Slack stand-in', () => slack.close());
    mkdirSync(options.dir, { recursive: true });
    const kubeconfigPath = resolve(options.dir, 'kubeconfig');
    // The clusters write it when they start, after Glidepath (their notification engines need its
    // URL); one left by an earlier run names ports that are gone. Glidepath's watch finds the new
    // one on a later try.
    rmSync(kubeconfigPath, { force: true });
    // In the sandbox you are the SRE group everywhere, so your clicks act (real deployments list
    // people per stage). A stall is said after a minute of silence at --speed 1, not 20; the watch
    // relists twice as often (world-config.ts), so a watched release waiting for you never stalls.
    // prod's Kargo API stand-in listens where the config says (its URL is written before the world starts).
    const kargoApiPort = await freePort();
    const configText = sampleWorldConfig({
      kubeconfigPath,
      approversEverywhere: ['S0SANDBOXSRE'],
      channels: CHANNELS,
      stallAfterMinutes: Math.max(0.05, 1 / options.speed),
      kargoApiUrl: `http://127.0.0.1:${kargoApiPort}`,
      actAsPeople: { users: KUBERNETES_PEOPLE, clusters: ACT_AS_PEOPLE_ON },
    });
    const config = parseConfigFile(configText, resolve(options.dir, 'config.yaml'));
    // The text that was parsed: the parsed config holds compiled matchers (Kargo stage selections), not YAML.
    writeFileSync(resolve(options.dir, 'config.yaml'), configText);
    const env = parseEnv({
      PORT: options.port,
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      INGEST_TOKENS: `dev=${TOKENS.dev},prod=${TOKENS.prod}`,
      CI_TOKENS: `checkout=${CI_TOKEN}`,
      // The Kargo API token of prod (target-aware Stages): in the environment, never in the config file.
      KARGO_API_TOKENS: `prod=${GLIDEPATH_SANDBOX_TOKEN}`,
      API_READ_TOKEN: READ_TOKEN,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      ...slackModeEnv(slackMode),
      LOG_LEVEL: options.logLevel,
    });
    // The whole product, as `npm start` builds it; only its Slack URL and kubeconfig point at stand-ins.
    const app = await startGlidepath({ env, config, logger: createLogger(env.LOG_LEVEL), metrics: createMetrics(), host: '127.0.0.1' });
    teardown.add('Glidepath', () => app.close());
    // The browser page (sandbox/web): a local Slack where you watch the threads and act. It signs
    // what you do and posts it to /slack/events, as Slack does in HTTP mode.
    const pageChannels = pipelineChannels(config.pipelines);
    const signed = new SignedSender({ url: `${app.url}/slack/events`, signingSecret: SIGNING_SECRET });
    const web = await startSandboxWeb({ slack, sender: signed, you: { id: YOU, name: 'you' }, users: MENTION_NAMES, channels: pageChannels, port: sandboxWebPort(process.env) });
    teardown.add('the web page', () => web.close());
    say(`Open ${web.url} — a local Slack: watch the release threads, click Approve, type /glidepath help\n`);

    // The clusters run on a clock CLUSTER_PACE × speed faster than the wall clock.
    const clock = new FakeClock(Date.now());
    let ticking = Promise.resolve();
    const ticker = setInterval(() => {
      ticking = ticking.then(() => clock.advance(100 * CLUSTER_PACE * options.speed));
    }, 100);
    teardown.add('the cluster clock', () => clearInterval(ticker));
    const world = await startSampleWorld({
      clock,
      kubeconfigPath,
      webhooks: { rolloutsUrl: `${app.url}/v1/facts/rollouts`, argocdUrl: `${app.url}/v1/facts/argocd`, tokens: TOKENS },
      heartbeatEveryMs: 10 * 60_000,
      kargoApiPort,
      analysisOutcome: storyAnalysis,
    });
    teardown.add('the clusters', () => world.stop());

    say(`Glidepath sandbox — a story at ${options.speed}× the readable pace (--speed N to change it)
  Glidepath      ${app.url}   (GET /v1/releases?pipeline=checkout with "Authorization: Bearer ${READ_TOKEN}")
  Slack stand-in ${slack.url}   (${slackMode === 'socket' ? 'Socket Mode: Glidepath holds a WebSocket to it; SANDBOX_SLACK=http for signed requests' : 'signed requests to /slack/events; SANDBOX_SLACK=socket for Socket Mode'})
  config         ${resolve(options.dir, 'config.yaml')}
  Kargo API      ${world.kargoApi.url}   (prod; the fleet Stage is target-aware: /glidepath promote checkout-kargo@fleet goes through it)
  Redis          ${redis.url}   (${redis.child ? 'a redis-server of its own' : 'keys'} under ${prefix}, removed when the sandbox stops)
  kubeconfig     ${kubeconfigPath}   (current context ${DEFAULT_CONTEXT})
${KUBECONFIG_CONTEXTS.map((c) => `    ${c.contexts.padEnd(24)} ${c.who}`).join('\n')}
${whoYouAre(config)}
  try            kubectl --kubeconfig ${kubeconfigPath} get rollouts -A
`);

    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms / options.speed));
    const actor = new Actor({ sender: slackSenderFor(slackMode, { glidepathUrl: app.url, signingSecret: SIGNING_SECRET, slack }), slack, page: web.hooks, say });
    const announce = async (releaseId: string, version: string): Promise<void> => {
      const res = await fetch(`${app.url}/v1/releases`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${CI_TOKEN}` },
        body: JSON.stringify({ releaseId, pipeline: 'checkout', images: [`registry.example.com/shop/checkout:${version}`], commit: randomBytes(6).toString('hex'), author: 'you', pullRequestUrl: 'https://git.example.com/shop/checkout/pull/129' }),
      });
      say(res.ok ? `→ ${releaseId} · CI announced it; the commit is on its way through Argo CD` : `  ${releaseId} · (CI's announcement was refused: ${res.status} ${await res.text()})`);
    };
    const decisions = new Decisions({ auto: options.auto, waitForYouMs: options.autoAfterSeconds * 1000, sleep, say, show: (lines) => web.setWaiting(lines) });
    // Enter in the terminal decides what the story waits for. Not a terminal-mode interface: the
    // terminal stays in its own line mode, so Ctrl-C still reaches the process group as a signal.
    const terminal = createInterface({ input: process.stdin, terminal: false });
    terminal.on('line', () => decisions.pressEnter());
    teardown.add('the terminal reader', () => terminal.close());
    say(options.auto ? `The sandbox acts for you (--auto): it approves, types and confirms after ${options.autoAfterSeconds} story seconds unless you do first.\n` : `The story waits for you at each decision: act in the page (${web.url}), or press Enter here to let it act for you. --auto plays it by itself.\n`);
    const channelName = (id: string) => pageChannels.find((c) => c.id === id)?.name ?? id;
    const story = new Story({ world, slack, glidepath: new GlidepathView(app.url, READ_TOKEN), actor, decisions, channelName, announce, say, sleep, channels: CHANNELS });
    const printer = new TranscriptPrinter(slack.transcript, config.pipelines, say, () => Date.now(), process.stdout.isTTY === true, () => actor.currentRelease);
    const printing = setInterval(() => {
      story.onButtons(printer.print());
      actor.flush();
    }, 500);
    teardown.add('the printer', () => {
      clearInterval(printing);
      printer.print();
    });

    if (options.seconds > 0) setTimeout(() => void stop(0), options.seconds * 1000);
    void story.play().catch((err: unknown) => say(`sandbox: the story stopped: ${err instanceof Error ? err.message : String(err)}`));
  } catch (err) {
    console.error(`sandbox: could not start: ${startError(err, options.port)}`);
    console.error(`sandbox: stopping what had started, Redis keys under ${prefix} included`);
    await stop(1);
  }
}

main().catch((err: unknown) => {
  console.error(`sandbox: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
