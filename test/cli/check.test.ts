/**
 * `glidepath check` against real stand-ins: an HTTPS API server with Glidepath's shipped RBAC
 * (and users that lack some of it, or that it does not know), Kargo's API stand-in, the Slack
 * stand-in, the shared Redis (read with INFO only) and a redis-server of the test's own for the
 * settings the shared one must never be given. One test per kind of failure, each naming its fix.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLine, type CheckLine } from '../../src/cli/check-line.js';
import { runCheck } from '../../src/cli/check.js';
import type { SandboxUser } from '../../sandbox/kube/auth.js';
import { freePort } from '../../sandbox/ensure-redis.js';
import { writeKubeconfig } from '../../sandbox/kube/kubeconfig.js';
import { startStandInCluster, type StandInCluster } from '../../sandbox/kube/stand-in.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { GLIDEPATH_RULES } from '../kube/support.js';
import { OwnRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const BOT_TOKEN = 'xoxb-check-test-token';
const READ_VERBS = new Set(['get', 'list', 'watch']);

// Tokens of 16+ characters: KARGO_API_TOKENS refuses shorter ones.
const USERS: SandboxUser[] = [
  { name: 'glidepath', token: 'glidepath-check-token', rules: GLIDEPATH_RULES },
  { name: 'viewer', token: 'viewer-check-token-0', rules: GLIDEPATH_RULES.map((r) => ({ ...r, verbs: r.verbs.filter((v) => READ_VERBS.has(v)) })).filter((r) => r.verbs.length > 0) },
];

let cluster: StandInCluster;
let slack: SlackStandIn;
let dir: string;
let kubeconfig: string;
let closedPort: number;

beforeAll(async () => {
  dir = tempDir('gp-check-');
  cluster = await startStandInCluster({ name: 'prod', users: USERS, defaultUser: 'glidepath', namespaces: ['shop', 'kargo-demo', 'argocd'], kargoApi: true, kubeconfigPath: false });
  slack = await startSlackStandIn({ botToken: BOT_TOKEN, notInChannel: ['C0OUTSIDE'] });
  // Nothing listens there: "unreachable", as a server that is down.
  closedPort = await freePort();
  const entry = cluster.kubeconfigEntry('glidepath');
  kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, [
    // `stranger@prod`: a user the API server does not know (401).
    { ...entry, users: [...entry.users, { name: 'stranger', token: 'a-token-prod-never-issued' }] },
    { name: 'gone', server: `https://127.0.0.1:${closedPort}`, caPem: entry.caPem ?? '', users: [{ name: 'glidepath', token: 'glidepath-check-token' }], defaultUser: 'glidepath' },
  ]);
});

afterAll(async () => {
  await slack?.close();
  await cluster?.stop();
});

interface ClusterEntry {
  name: string;
  kubeconfigContext: string;
  kubeconfigPath?: string;
  kargoApi?: { url: string };
}

function writeConfig(clusters: ClusterEntry[], channels: string[] = ['C0SHOP']): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  const target = clusters[0]!.name;
  const pipelines = channels.map((channel, i) => ({
    name: `shop-${i}`,
    channel,
    stages: [
      { name: 'canary', cluster: target, rollouts: { namespace: 'shop', selector: 'app=shop' } },
      { name: 'test', cluster: target, kargo: { project: 'kargo-demo', stage: 'test' } },
    ],
  }));
  // kubeconfigPath, not KUBECONFIG: client-node reads KUBECONFIG from the process, not from the env a check is given.
  writeFileSync(path, stringify({ clusters: clusters.map((c) => ({ kubeconfigPath: kubeconfig, ...c })), pipelines }));
  return path;
}

function envFor(configPath: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { GLIDEPATH_CONFIG: configPath, REDIS_URL: 'redis://127.0.0.1:6379', SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_API_URL: slack.apiUrl, ...extra };
}

const prod = (context = 'prod'): ClusterEntry => ({ name: 'prod', kubeconfigContext: context });

function text(lines: CheckLine[]): string {
  return lines.map(formatLine).join('\n');
}

function failures(lines: CheckLine[]): string[] {
  return lines.filter((l) => l.mark === 'FAIL').map(formatLine);
}

describe('glidepath check', () => {
  it('all ok: every cluster, Redis, Slack channel and Kargo API token passes', async () => {
    const config = writeConfig([{ ...prod(), kargoApi: { url: cluster.kargoApi!.url } }]);
    const lines = await runCheck([], envFor(config, { KARGO_API_TOKENS: 'prod=glidepath-check-token' }));
    expect(failures(lines)).toEqual([]);
    // The shared Redis may run without AOF (a warning); everything else says ok.
    expect(lines.filter((l) => l.mark !== 'ok').map((l) => l.text).every((t) => t.includes('append-only file'))).toBe(true);
    const all = text(lines);
    expect(all).toContain('ok    config: ');
    expect(all).toContain('ok    cluster prod: kubeconfig context "prod"');
    expect(all).toMatch(/ok {4}cluster prod: API server https:\/\/127\.0\.0\.1:\d+ answers \(v[\d.]+/);
    expect(all).toMatch(/ok {4}cluster prod: may do everything src\/kube\/verbs\.ts declares \(\d+ access reviews in kargo-demo, shop\)/);
    expect(all).toContain('ok    kargo api prod: ');
    expect(all).toContain('ok    redis: maxmemory-policy is noeviction');
    expect(all).toContain('ok    slack: SLACK_BOT_TOKEN accepted');
    expect(all).toContain('ok    slack channel C0SHOP (pipeline shop-0): #c0shop, the bot is a member');
    // No secret in the report.
    for (const secret of ['glidepath-check-token', BOT_TOKEN]) expect(all).not.toContain(secret);
  });

  it('a context missing from the kubeconfig: which one, and which there are', async () => {
    const lines = await runCheck([], envFor(writeConfig([prod('staging')])));
    expect(failures(lines)).toEqual([expect.stringMatching(/^FAIL {2}cluster prod: context "staging" is not in the kubeconfig \(contexts: prod, viewer@prod, stranger@prod, gone\).*fix clusters\[\]\.kubeconfigContext/)]);
  });

  it('an API server that is not listening is unreachable, and no permission is asked', async () => {
    const lines = await runCheck([], envFor(writeConfig([{ name: 'gone', kubeconfigContext: 'gone' }])));
    expect(failures(lines)).toEqual([`FAIL  cluster gone: API server https://127.0.0.1:${closedPort} is unreachable (ECONNREFUSED): check the server address in the kubeconfig and that it is reachable from here`]);
    expect(text(lines)).not.toContain('access reviews');
  });

  it('a user the API server does not know is rejected (401), not unreachable', async () => {
    const lines = await runCheck([], envFor(writeConfig([prod('stranger@prod')])));
    expect(failures(lines)).toEqual([expect.stringMatching(/^FAIL {2}cluster prod: API server https:\/\/127\.0\.0\.1:\d+ rejected the credentials \(HTTP 401\)/)]);
  });

  it('a read-only user: the verbs it lacks are named, with deploy/rbac', async () => {
    const lines = await runCheck([], envFor(writeConfig([prod('viewer@prod')])));
    const [line, ...rest] = failures(lines);
    expect(rest).toEqual([]);
    expect(line).toMatch(/^FAIL {2}cluster prod: may not /);
    for (const missing of ['patch rollouts (argoproj.io) in shop', 'patch rollouts/status (argoproj.io) in shop', 'promote stages (kargo.akuity.io) in kargo-demo', 'create promotions (kargo.akuity.io) in kargo-demo']) {
      expect(line).toContain(missing);
    }
    expect(line).not.toMatch(/\bget rollouts\b/);
    expect(line).toContain('deploy/rbac/glidepath-clusterrole.yaml');
  });

  it('a Kargo API token the API does not take, and a Kargo API that is not listening', async () => {
    const rejected = await runCheck([], envFor(writeConfig([{ ...prod(), kargoApi: { url: cluster.kargoApi!.url } }]), { KARGO_API_TOKENS: 'prod=not-a-token-kargo-knows' }));
    expect(failures(rejected)).toEqual([`FAIL  kargo api prod: ${cluster.kargoApi!.url} rejected the token (HTTP 401: invalid token): renew the token of prod in KARGO_API_TOKENS`]);
    const closed = await runCheck([], envFor(writeConfig([{ ...prod(), kargoApi: { url: `http://127.0.0.1:${closedPort}` } }]), { KARGO_API_TOKENS: 'prod=glidepath-check-token' }));
    expect(failures(closed)).toEqual([expect.stringMatching(/^FAIL {2}kargo api prod: http:\/\/127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\)/)]);
  });

  it('Slack unreachable and Slack rejecting the token are different lines', async () => {
    const config = writeConfig([prod()]);
    const unreachable = await runCheck([], envFor(config, { SLACK_API_URL: `http://127.0.0.1:${closedPort}/api/` }));
    expect(failures(unreachable)).toEqual([`FAIL  slack: Slack at http://127.0.0.1:${closedPort}/api/ is unreachable (ECONNREFUSED): check SLACK_API_URL (unset for slack.com), DNS and the egress to Slack`]);
    const rejected = await runCheck([], envFor(config, { SLACK_BOT_TOKEN: 'xoxb-not-the-bot-token' }));
    expect(failures(rejected)).toEqual([expect.stringMatching(/^FAIL {2}slack: Slack at .* rejected SLACK_BOT_TOKEN \(auth\.test: invalid_auth: SLACK_BOT_TOKEN is not valid/)]);
    expect(text(rejected)).not.toContain('xoxb-not-the-bot-token');
  });

  it('the bot not in a pipeline channel: invite it', async () => {
    const lines = await runCheck([], envFor(writeConfig([prod()], ['C0SHOP', 'C0OUTSIDE'])));
    expect(failures(lines)).toEqual(['FAIL  slack channel C0OUTSIDE (pipeline shop-1): the bot is not a member of #c0outside: invite @glidepath to #c0outside (/invite @glidepath in the channel)']);
  });

  it('a missing config file names the variable that named it; Redis and Slack are still checked', async () => {
    const missing = join(dir, 'nowhere.yaml');
    const lines = await runCheck([], envFor(missing));
    expect(failures(lines)).toEqual([`FAIL  config: GLIDEPATH_CONFIG=${missing}: no such file`]);
    expect(text(lines)).toContain('ok    slack: SLACK_BOT_TOKEN accepted');
    expect(text(lines)).toContain('ok    redis: ');
  });

  it('a bad config: every problem by its path, as start-up says', async () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, stringify({ clusters: [{ ...prod(), kubeconfigPath: kubeconfig }], pipelines: [{ name: 'shop', channel: '#shop', stages: [{ name: 'canary', cluster: 'nope', rollouts: { namespace: 'shop', selector: 'app=shop' } }] }] }));
    const lines = await runCheck([], envFor(path));
    expect(failures(lines)).toEqual([
      `FAIL  config: ${path}: pipelines[0].channel: must be a Slack channel id such as C0123ABCD (not a #name)`,
      `FAIL  config: ${path}: pipelines[0].stages[0].cluster: unknown cluster "nope" (clusters: prod)`,
    ]);
  });

  it('Redis: an eviction policy other than noeviction fails; AOF on is ok', async () => {
    const redis = await OwnRedis.start({ aof: true, args: ['--maxmemory-policy', 'allkeys-lru'] });
    try {
      const lines = await runCheck([], envFor(writeConfig([prod()]), { REDIS_URL: redis.url }));
      expect(failures(lines)).toEqual([expect.stringMatching(/^FAIL {2}redis: maxmemory-policy is allkeys-lru; BullMQ requires noeviction .*set "maxmemory-policy noeviction"/)]);
      expect(text(lines)).toContain('ok    redis: append-only file (AOF) is on');
    } finally {
      await redis.stop();
      redis.cleanup();
    }
  });

  it('Redis: AOF off is a warning, not a failure', async () => {
    const redis = await OwnRedis.start();
    try {
      const lines = await runCheck([], envFor(writeConfig([prod()]), { REDIS_URL: redis.url }));
      expect(failures(lines)).toEqual([]);
      expect(text(lines)).toContain('warn  redis: append-only file (AOF) is off: a Redis restart loses the facts queued since the last snapshot');
    } finally {
      await redis.stop();
    }
  });

  it('Redis not listening is unreachable', async () => {
    const lines = await runCheck([], envFor(writeConfig([prod()]), { REDIS_URL: `redis://127.0.0.1:${closedPort}` }));
    expect(failures(lines)).toEqual([expect.stringMatching(new RegExp(`^FAIL {2}redis: Redis at redis://127\\.0\\.0\\.1:${closedPort} is unreachable \\(.*ECONNREFUSED`))]);
  });
});

/** Each run is a cold `tsx` process compiling the bot: seconds alone, tens of seconds beside the rest of the suite. Only ends a hung run. */
const PROCESS_TIMEOUT = 120_000;

describe('glidepath check as a process', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { PATH: process.env.PATH, NODE_TLS_REJECT_UNAUTHORIZED: '1', ...env } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('exits 0 when every check passes and 1 on a failure, one line per check on stdout', async () => {
    const passing = await run(['check'], envFor(writeConfig([prod()])));
    expect(passing.code).toBe(0);
    expect(passing.stdout.trim().split('\n').every((l) => /^(ok|warn) {2}/.test(l))).toBe(true);
    const failing = await run(['check'], envFor(writeConfig([prod('viewer@prod')])));
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/^FAIL {2}cluster prod: may not /m);
  }, PROCESS_TIMEOUT);

  it('--help for the bot and every subcommand, without starting anything', async () => {
    const bot = await run(['--help'], {});
    expect(bot).toMatchObject({ code: 0 });
    expect(bot.stdout).toContain('glidepath check');
    expect(bot.stdout).toContain('glidepath prune-notified');
    const check = await run(['check', '--help'], {});
    expect(check).toMatchObject({ code: 0 });
    expect(check.stdout).toMatch(/^usage: glidepath check/);
    const prune = await run(['prune-notified', '--help'], {});
    expect(prune).toMatchObject({ code: 0 });
    expect(prune.stdout).toMatch(/^usage: glidepath prune-notified/);
    const typo = await run(['chek'], {});
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('unknown command "chek"');
  }, PROCESS_TIMEOUT);
});
