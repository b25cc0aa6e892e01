/**
 * GLIDEPATH_ROLE: an ingest-only, a worker-only and a writer-only process on one Redis prefix
 * make the same Slack thread as one process with every role; a process without ingest serves
 * only /healthz, /readyz and /metrics.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { parseEnv, type Role } from '../../src/config/env.js';
import { ConfigError } from '../../src/config/errors.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { eventually } from '../helpers/slack-harness.js';
import { releaseBodies } from '../slack/e2e-scenario.js';

const CHANNEL = 'C0123CHECKOUT';
const PENDING = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function deployment(processes: Role[][]): Promise<{ slack: SlackStandIn; started: Glidepath[] }> {
  const slack = await startSlackStandIn({ botToken: 'xoxb-roles' });
  cleanup.push(() => slack.close());
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-roles', SLACK_SIGNING_SECRET: 'roles-signing-secret', SLACK_API_URL: slack.apiUrl });
  cleanup.push(() => dropPrefix(env.REDIS_PREFIX));
  const started: Glidepath[] = [];
  for (const roles of processes) {
    const glidepath = await startTestGlidepath(testConfig(), env, { roles });
    cleanup.push(() => glidepath.close());
    started.push(glidepath);
  }
  return { slack, started };
}

/** Posts the release's notifications to the ingest process one by one (each reduced before the next, as in life) and returns the thread. */
async function releaseThread(processes: Role[][]): Promise<{ parent: string; blocks: string; replies: string[] }> {
  const { slack, started } = await deployment(processes);
  const ingest = started.find((g) => g.roles.has('ingest'))!;
  const queues = started.find((g) => g.roles.has('worker'))!;
  const idle = async (states: readonly (typeof PENDING)[number][], withSlack: boolean) => {
    const counts = [await queues.facts.queue.getJobCounts(...states), ...(withSlack ? [await queues.slack!.queue!.getJobCounts(...states)] : [])];
    return counts.every((c) => Object.values(c).every((n) => n === 0)) || undefined;
  };
  for (const body of releaseBodies()) {
    expect((await postJson(`${ingest.url}/v1/facts/rollouts`, body)).status).toBe(202);
    await eventually(() => idle(PENDING, false), 'the fact to be reduced');
  }
  await eventually(() => idle(PENDING, true), 'the thread to be written', 60_000);
  const threads = slack.transcript.messages(CHANNEL);
  expect(threads).toHaveLength(1);
  const parent = threads[0]!;
  // "last heard" is the wall-clock minute: the two deployments may run either side of a minute boundary.
  const blocks = JSON.stringify(parent.blocks).replace(/<!date\^\d+\^[^|>]*\|[^>]*>/g, '<!date>');
  return { parent: parent.text, blocks, replies: parent.replies.map((r) => r.text).sort() };
}

describe('roles', () => {
  it('ingest-only, worker-only and writer-only processes together write the same thread as one process with every role', { timeout: 120_000 }, async () => {
    const together = await releaseThread([['ingest', 'worker', 'writer']]);
    const apart = await releaseThread([['ingest'], ['worker'], ['writer']]);
    expect(together.parent).toBe('Release rel-5 (checkout): Complete. staging Healthy, prod Healthy');
    // staging healthy, paused, resumed outside Glidepath (the scenario resumes without it), prod healthy, complete, the release timeline.
    expect(together.replies).toHaveLength(6);
    expect(apart).toEqual(together);
  });

  it('a process without the ingest role serves only /healthz, /readyz and /metrics', async () => {
    const { started } = await deployment([['worker', 'writer'], ['ingest']]);
    const [worker, ingest] = started as [Glidepath, Glidepath];
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${worker.url}${path}`)).status, path).toBe(200);
    const ready = (await (await fetch(`${worker.url}/readyz`)).json()) as { workers: { queue: string; running: boolean }[] };
    expect(ready.workers.map((w) => w.queue).sort()).toEqual(['facts', 'slack', 'watchdog']);
    expect((await postJson(`${worker.url}/v1/facts/rollouts`, releaseBodies()[0])).status).toBe(404);
    expect((await fetch(`${worker.url}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${worker.url}/v1/releases?pipeline=checkout`)).status).toBe(404);
    // The ingest process takes facts and Slack requests, and runs no worker.
    expect((await postJson(`${ingest.url}/v1/facts/rollouts`, releaseBodies()[0])).status).toBe(202);
    expect(((await (await fetch(`${ingest.url}/readyz`)).json()) as { workers: unknown[] }).workers).toEqual([]);
  });

  it('GLIDEPATH_ROLE takes all or a comma list, and names a role it does not know', () => {
    expect([...parseEnv({}).GLIDEPATH_ROLE].sort()).toEqual(['ingest', 'worker', 'writer']);
    expect([...parseEnv({ GLIDEPATH_ROLE: 'worker, writer' }).GLIDEPATH_ROLE].sort()).toEqual(['worker', 'writer']);
    expect(() => parseEnv({ GLIDEPATH_ROLE: 'worker,reducer' })).toThrow(ConfigError);
    expect(() => parseEnv({ GLIDEPATH_ROLE: 'worker,reducer' })).toThrow(/GLIDEPATH_ROLE: "reducer" is not a role: use all, or a comma list of ingest, worker, writer/);
  });
});
