/**
 * Generated pipelines across replicas: with GLIDEPATH_ROLE split in three processes on one Redis
 * prefix (ingest-only, worker-only, writer-only), a pipeline a template generates from webhook
 * facts is known to the writer, which never sees an object itself (the shared record,
 * src/routing/shared-catalog.ts), so the app's thread is written as with one process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn } from '../../sandbox/slack/server.js';
import type { Role } from '../../src/config/env.js';
import { parseConfigFile } from '../../src/config/file.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { eventually } from '../helpers/slack-harness.js';
import { releaseBodies } from '../slack/e2e-scenario.js';

const CHANNEL = 'C0FLEET';
const PENDING = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;
const config = () =>
  parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod, optional: true }
pipelineTemplates:
  - name: "{{value}}"
    channel: ${CHANNEL}
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop], selector: "app.kubernetes.io/part-of" }
      groupBy: { label: app.kubernetes.io/part-of }
    stages:
      - { name: staging, cluster: prod, rollouts: { namespace: "{{namespace}}", selector: "app.kubernetes.io/part-of={{value}},env=staging" } }
      - { name: prod, cluster: prod, rollouts: { namespace: "{{namespace}}", selector: "app.kubernetes.io/part-of={{value}},env=prod" } }
`);

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('generated pipelines across replicas', () => {
  it('a writer-only process writes the thread of a pipeline generated where the facts came in', { timeout: 120_000 }, async () => {
    const slack = await startSlackStandIn({ botToken: 'xoxb-templates-roles' });
    cleanup.push(() => slack.close());
    const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-templates-roles', SLACK_SIGNING_SECRET: 'templates-roles-secret', SLACK_API_URL: slack.apiUrl });
    cleanup.push(() => dropPrefix(env.REDIS_PREFIX));
    const started: Glidepath[] = [];
    for (const roles of [['ingest'], ['worker'], ['writer']] as Role[][]) {
      const glidepath = await startTestGlidepath(config(), env, { roles });
      cleanup.push(() => glidepath.close());
      started.push(glidepath);
    }
    const [ingest, worker] = started as [Glidepath, Glidepath, Glidepath];
    const idle = async (withSlack: boolean) => {
      const counts = [await worker.facts.queue.getJobCounts(...PENDING), ...(withSlack ? [await worker.slack!.queue!.getJobCounts(...PENDING)] : [])];
      return counts.every((c) => Object.values(c).every((n) => n === 0)) || undefined;
    };
    for (const body of releaseBodies()) {
      expect((await postJson(`${ingest.url}/v1/facts/rollouts`, body)).status).toBe(202);
      await eventually(() => idle(false), 'the fact to be reduced');
    }
    await eventually(() => idle(true), 'the thread to be written', 60_000);
    const threads = slack.transcript.messages(CHANNEL);
    expect(threads.map((t) => t.text.split(' ').slice(0, 2).join(' '))).toEqual(['Release rel-5']);
    expect(threads[0]!.replies.some((r) => r.text.includes('waits for approval'))).toBe(true);
    expect((await worker.store.get('checkout', 'rel-5'))?.status).toBe('Complete');
  });
});
