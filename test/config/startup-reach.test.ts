/**
 * Start-up that tells "unreachable" from "rejected" (issue 19, item 5): for Redis (not listening
 * vs NOAUTH / WRONGPASS, on a redis-server of the test's own) and for every cluster (an API
 * server not listening vs one refusing the kubeconfig user, on the stand-in API server); a
 * missing context stops start-up naming it and the contexts there are, unless the cluster is
 * `optional`; with no kubeconfig at all it says so (never "loaded-context"); a missing config
 * file names the variable that named it. What the person sees: main's stderr, or the log.
 */
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/config/env.js';
import { parseConfigFile, type ConfigFile } from '../../src/config/file.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { writeFileSync } from 'node:fs';
import { freePort } from '../../sandbox/ensure-redis.js';
import type { SandboxUser } from '../../sandbox/kube/auth.js';
import { writeKubeconfig } from '../../sandbox/kube/kubeconfig.js';
import { startStandInCluster, type StandInCluster } from '../../sandbox/kube/stand-in.js';
import { GLIDEPATH_RULES } from '../kube/support.js';
import { dropPrefix, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { OwnRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainTs = join(root, 'src/main.ts');
const tsxLoader = join(root, 'node_modules/tsx/dist/loader.mjs');
const USERS: SandboxUser[] = [{ name: 'glidepath', token: 'glidepath-startup-token', rules: GLIDEPATH_RULES }];

let cluster: StandInCluster;
let dir: string;
let kubeconfig: string;
let closedPort: number;

beforeAll(async () => {
  dir = tempDir('gp-startup-reach-');
  cluster = await startStandInCluster({ name: 'prod', users: USERS, defaultUser: 'glidepath', namespaces: ['shop'], kubeconfigPath: false });
  closedPort = await freePort();
  const entry = cluster.kubeconfigEntry('glidepath');
  kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, [
    // `stranger@prod`: a user the API server does not know (401).
    { ...entry, users: [...entry.users, { name: 'stranger', token: 'a-token-prod-never-issued' }] },
    // Nothing listens there.
    { name: 'gone', server: `https://127.0.0.1:${closedPort}`, caPem: entry.caPem ?? '', users: [{ name: 'glidepath', token: 'glidepath-startup-token' }], defaultUser: 'glidepath' },
  ]);
});
const prefixes: string[] = [];
afterAll(async () => {
  await cluster?.stop();
  for (const prefix of prefixes) await dropPrefix(prefix);
});

interface ClusterEntry {
  kubeconfigContext: string;
  kubeconfigPath?: string;
  optional?: boolean;
}

function configText(entry: ClusterEntry): string {
  return stringify({
    clusters: [{ name: 'prod', kubeconfigPath: kubeconfig, ...entry }],
    pipelines: [{ name: 'checkout', channel: 'C0CHECKOUT', stages: [{ name: 'prod', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app=checkout' } }] }],
  });
}

/** The log lines a start-up wrote, at info and above. */
function capturingLogger(): { logger: pino.Logger; lines: () => { level: number; msg: string }[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'info', base: undefined }, stream), lines: () => out.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string }) };
}

const WARN = 40;

/** Starts Glidepath (ingest and worker: the roles that use clusters, no Slack) on the config; the error when it will not start. */
async function start(config: ConfigFile, logger = capturingLogger().logger, roles: Role[] = ['ingest', 'worker']): Promise<{ app?: Glidepath; error?: Error }> {
  const env = testEnv();
  prefixes.push(env.REDIS_PREFIX);
  try {
    return { app: await startTestGlidepath(config, env, { logger, roles }) };
  } catch (err) {
    return { error: err as Error };
  }
}

/** Runs `node src/main.ts` (through tsx) with `env` alone: what a person at a terminal sees. */
async function main(env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  const result = await promisify(execFile)(process.execPath, ['--import', tsxLoader, mainTs], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } }).catch((e: { code: number; stderr: string }) => e);
  return { code: (result as { code?: number }).code ?? 0, stderr: result.stderr };
}

describe('start-up: clusters', () => {
  it('a context that is not in the kubeconfig stops start-up, naming it and the contexts there are', async () => {
    const path = join(dir, 'missing-context.yaml');
    writeFileSync(path, configText({ kubeconfigContext: 'staging' }));
    const { code, stderr } = await main({ GLIDEPATH_CONFIG: path, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: `gp-test-startup-${process.pid}` });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `glidepath: cluster prod: context "staging" is not in the kubeconfig (contexts: prod, stranger@prod, gone) (kubeconfig: ${kubeconfig}): fix clusters[].kubeconfigContext or the kubeconfig, or mark the cluster optional: true to start without it\n`,
    );
    await dropPrefix(`gp-test-startup-${process.pid}`);
  });

  it('with no kubeconfig at all it says so, not "loaded-context"', async () => {
    const home = tempDir('gp-startup-home-');
    const config = parseConfigFile(configText({ kubeconfigContext: 'prod' }).replace(/\s*kubeconfigPath: .*\n/, '\n'));
    // client-node and Glidepath look for ~/.kube/config under HOME (this worker's own process).
    const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
    process.env.HOME = home;
    delete process.env.KUBECONFIG;
    try {
      const { app, error } = await start(config);
      await app?.close();
      expect(error?.message).toBe(`cluster prod: there is no kubeconfig (KUBECONFIG is unset and ${home}/.kube/config does not exist): set clusters[].kubeconfigPath or KUBECONFIG, or mark the cluster optional: true to start without it`);
    } finally {
      for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('an optional cluster whose context is missing: start-up goes on and says so', async () => {
    const log = capturingLogger();
    const { app, error } = await start(parseConfigFile(configText({ kubeconfigContext: 'staging', optional: true })), log.logger);
    expect(error).toBeUndefined();
    try {
      expect(log.lines().map((l) => l.msg)).toContainEqual(expect.stringMatching(/^cluster prod \(optional\) cannot be configured: context "staging" is not in the kubeconfig \(contexts: prod, stranger@prod, gone\).*; Glidepath starts without it and tries again at each use$/));
      const answer = await fetch(`${app!.url}/readyz`);
      expect(answer.status).toBe(200);
    } finally {
      await app?.close();
    }
  });

  it('an ingest of webhooks alone needs no kubeconfig: it starts though a required context is missing, where a worker stops', async () => {
    const config = parseConfigFile(configText({ kubeconfigContext: 'staging' }));
    const log = capturingLogger();
    const { app, error } = await start(config, log.logger, ['ingest']);
    expect(error).toBeUndefined();
    try {
      expect((await fetch(`${app!.url}/readyz`)).status).toBe(200);
      expect(log.lines().map((l) => l.msg).filter((m) => m.startsWith('cluster prod'))).toEqual([]);
    } finally {
      await app?.close();
    }
    const worker = await start(config, capturingLogger().logger, ['worker']);
    await worker.app?.close();
    expect(worker.error?.message).toMatch(/^cluster prod: context "staging" is not in the kubeconfig/);
  });

  it('an optional cluster refuses with the reason until its context appears, then works (tried again at each use)', () => {
    const later = join(dir, 'kubeconfig-later');
    const clients = new ClusterClients([{ name: 'prod', kubeconfigPath: later, kubeconfigContext: 'prod', optional: true }]);
    expect(() => clients.get('prod')).toThrow(`Cluster prod cannot be configured: ENOENT: no such file or directory, open '${later}'`);
    writeKubeconfig(later, [cluster.kubeconfigEntry('glidepath')]);
    expect(clients.get('prod').server).toBe(cluster.server.url);
  });

  it('an API server that refuses the credentials (401) stops start-up: rejected, not unreachable', async () => {
    const { app, error } = await start(parseConfigFile(configText({ kubeconfigContext: 'stranger@prod' })));
    await app?.close();
    expect(error?.message).toMatch(/^cluster prod: API server https:\/\/127\.0\.0\.1:\d+ rejected the credentials \(HTTP 401\): the kubeconfig user's token or certificate is not accepted; renew it, or mark the cluster optional: true to start without it$/);
  });

  it('an API server that is not listening is unreachable: said at warn, and start-up goes on', async () => {
    const log = capturingLogger();
    const { app, error } = await start(parseConfigFile(configText({ kubeconfigContext: 'gone' })), log.logger);
    await app?.close();
    expect(error).toBeUndefined();
    expect(log.lines().filter((l) => l.level >= WARN).map((l) => l.msg)).toContain(
      `cluster prod: API server https://127.0.0.1:${closedPort} is unreachable (ECONNREFUSED): check the server address in the kubeconfig and that it is reachable from here; Glidepath starts, and its watch and the actions on prod fail until it answers`,
    );
  });

  it('an API server that answers is said at info, with its version', async () => {
    const log = capturingLogger();
    const { app, error } = await start(parseConfigFile(configText({ kubeconfigContext: 'prod' })), log.logger);
    await app?.close();
    expect(error).toBeUndefined();
    expect(log.lines().filter((l) => l.level >= WARN && l.msg.includes('cluster'))).toEqual([]);
    expect(log.lines().map((l) => l.msg)).toContainEqual(expect.stringMatching(/^cluster prod: API server https:\/\/127\.0\.0\.1:\d+ answers \(v[\d.]+/));
  });
});

describe('start-up: Redis', () => {
  let redis: OwnRedis;
  beforeAll(async () => {
    redis = await OwnRedis.start({ args: ['--requirepass', 'the-right-password'] });
  });
  afterAll(() => redis?.stop());

  const config = () => parseConfigFile(configText({ kubeconfigContext: 'prod' }));

  it('no password where Redis wants one: rejected (NOAUTH), with the variables to fix', async () => {
    const failure = await startTestGlidepath(config(), testEnv({ REDIS_URL: redis.url }), { roles: [], tuning: { redisReadyTimeoutMs: 20_000 } }).then(
      async (app) => (await app.close(), new Error('started')),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toMatch(new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${redis.port} rejected the credentials \\(NOAUTH .*\\): check REDIS_USERNAME / REDIS_PASSWORD \\(or the user and password in REDIS_URL\\) \\((requests|workers) connection\\)$`));
  });

  it('a wrong password: rejected (WRONGPASS), the password hidden', async () => {
    const url = `redis://:not-the-password@127.0.0.1:${redis.port}`;
    const failure = await startTestGlidepath(config(), testEnv({ REDIS_URL: url }), { roles: [], tuning: { redisReadyTimeoutMs: 20_000 } }).then(
      async (app) => (await app.close(), new Error('started')),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toContain(`Redis at redis://:***@127.0.0.1:${redis.port} rejected the credentials (WRONGPASS`);
    expect(failure.message).not.toContain('not-the-password');
  });

  // Not listening (unreachable): test/integration/shutdown.test.ts, with a shorter ready timeout than main's.
});

describe('start-up: the config file', () => {
  it('a missing file names the variable that named it, in one line', async () => {
    const missing = join(dir, 'nowhere.yaml');
    const { code, stderr } = await main({ GLIDEPATH_CONFIG: missing });
    expect(code).toBe(1);
    expect(stderr).toBe(`glidepath: GLIDEPATH_CONFIG=${missing}: no such file\n`);
  });
});
