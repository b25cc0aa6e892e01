/**
 * A step analysis that fails, and one that ends inconclusive, in the Rollouts simulator (which
 * creates real AnalysisRun objects with measured values): the thread names each failing metric,
 * the values it measured and the condition they were judged by. Glidepath watches the stand-in
 * cluster and reads the AnalysisRun as its service account (the shipped RBAC).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import type { Glidepath } from '../../src/glidepath.js';
import { namespaceManifest, rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { RolloutsController } from '../../sandbox/kube/controllers/rollouts.js';
import { ResourceRegistry } from '../../sandbox/kube/resources.js';
import { startKubeServer, type KubeServer } from '../../sandbox/kube/server.js';
import { ObjectStore } from '../../sandbox/kube/store.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';

const CHANNEL = 'C0ANALYSIS';
const LABELS = { 'app.kubernetes.io/part-of': 'shop', env: 'prod' };
const STEPS = [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'success-rate' }] } }, { setWeight: 50 }];

describe('a failed or inconclusive analysis in the thread', () => {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const store = new ObjectStore(new ResourceRegistry(), { clock });
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-analysis', SLACK_SIGNING_SECRET: 'analysis-signing-secret-0123' });
  let server: KubeServer;
  let slack: SlackStandIn;
  let rollouts: RolloutsController;
  let app: Glidepath;
  let kubeconfigPath: string;
  const rt = () => store.registry.byKind('Rollout');
  const deploy = (name: string, version: string, releaseId: string) => {
    if (!store.tryGet(rt(), 'shop', name)) {
      store.create(rt(), 'shop', rolloutManifest({ namespace: 'shop', name, image: `registry.example.com/shop/${name}:${version}`, replicas: 2, steps: STEPS, labels: LABELS, annotations: { 'hangar.io/release-id': releaseId } }));
    } else {
      store.mutate(rt(), 'shop', name, (o) => {
        o.spec.template.spec.containers[0].image = `registry.example.com/shop/${name}:${version}`;
        o.metadata.annotations = { ...o.metadata.annotations, 'hangar.io/release-id': releaseId };
      });
    }
  };
  const runFor = async (ms: number) => {
    for (let t = 0; t < ms; t += 500) await clock.advance(500);
  };
  /** Each reply's whole text (the first section: the fallback `text` is its first line only). */
  const replies = () => slack.transcript.messages(CHANNEL).flatMap((m) => m.replies).map((r) => ({ text: (r.blocks[0] as { text?: { text?: string } } | undefined)?.text?.text ?? r.text }));

  beforeAll(async () => {
    for (const ns of ['shop', 'argocd']) store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest(ns));
    server = await startKubeServer({ store, users: USERS, bookmarkIntervalMs: 500 });
    kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'glidepath-analysis-')), 'kubeconfig');
    server.writeKubeconfig(kubeconfigPath, 'prod', 'glidepath');
    slack = await startSlackStandIn({ botToken: 'xoxb-analysis' });
    // The new version of checkout fails its analysis; cart's is inconclusive.
    rollouts = new RolloutsController({
      store,
      clock,
      podReadyMs: 1_000,
      analysisMs: 5_000,
      analysisOutcome: (rollout) => ({ phase: rollout.metadata.name === 'checkout' ? 'Failed' : 'Inconclusive' }),
    }).start();
    const config = parseConfigFile(`
settings: { watchLeaseSeconds: 2, watchResyncMinutes: 10 }
clusters:
  - { name: prod, kubeconfigPath: ${kubeconfigPath}, kubeconfigContext: prod, facts: watch }
pipelines:
  - name: shop
    channel: ${CHANNEL}
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=prod" } }
`);
    app = await startTestGlidepath(config, { ...env, SLACK_API_URL: slack.apiUrl });
    await waitFor(async () => app.watchSource?.held().includes('prod') || undefined, 'lease held');
    for (const name of ['checkout', 'cart']) deploy(name, '1.0.0', 'rel-1');
    await runFor(5_000);
    await waitFor(async () => (await app.store.get('shop', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    for (const name of ['checkout', 'cart']) deploy(name, '2.0.0', 'rel-2');
    await runFor(15_000);
  }, 60_000);

  afterAll(async () => {
    rollouts?.stop();
    await app?.close();
    await server?.close();
    await slack?.close();
    await dropPrefix(env.REDIS_PREFIX);
    if (kubeconfigPath) rmSync(dirname(kubeconfigPath), { recursive: true, force: true });
  });

  it('a failed analysis: the reply names the metric, its measured value and the failure condition', async () => {
    const reply = await waitFor(async () => replies().find((r) => r.text.includes('prod/shop/checkout') && r.text.includes('the analysis failed')), 'analysis-failed reply');
    expect(reply.text).toContain('• `success-rate` Failed: measured `[0.82]`; failure condition `result[0] &lt; 0.9`'); // `<` escaped for Slack's mrkdwn
  }, 30_000);

  it('an inconclusive analysis: the paused reply says what was measured, against which condition', async () => {
    const reply = await waitFor(async () => replies().find((r) => r.text.includes('prod/shop/cart') && r.text.includes('waits for approval')), 'paused reply');
    expect(reply.text).toContain('InconclusiveAnalysisRun');
    expect(reply.text).toContain('• `success-rate` Inconclusive: measured `[0.93]`; failure condition `result[0] &lt; 0.9`'); // `<` escaped for Slack's mrkdwn
  }, 30_000);
});
