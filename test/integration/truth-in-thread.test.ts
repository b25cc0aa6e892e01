/**
 * The thread matches the cluster: two Rollouts of one release wait for approval; one is resumed
 * and the other aborted outside Glidepath, as kubectl does it (a merge patch of the status
 * subresource, sent by client-node to the stand-in API server as an admin). Glidepath watches
 * the cluster, so the thread says what happened, and the Approve/Abort buttons of the replies
 * that asked are gone from Slack (the stand-in keeps every message and its edits).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
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
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';

const CHANNEL = 'C0TRUTH';
const LABELS = { 'app.kubernetes.io/part-of': 'shop', env: 'prod' };
const STEPS = [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }];

describe('the thread says what was done outside Glidepath', () => {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const store = new ObjectStore(new ResourceRegistry(), { clock });
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-truth', SLACK_SIGNING_SECRET: 'truth-signing-secret-0123', SLACK_API_URL: '' });
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
  /** `kubectl argo rollouts promote|abort`: a merge patch of the status subresource, as an admin. */
  const kubectlStatusPatch = async (name: string, status: Record<string, unknown>) => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    kc.setCurrentContext('admin@prod');
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.patchNamespacedCustomObjectStatus(
      { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: 'shop', name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  const replies = (): TranscriptMessage[] => slack.transcript.messages(CHANNEL).flatMap((m) => m.replies);
  const replyTo = (name: string, needle: string) => replies().find((r) => r.text.includes(`prod/shop/${name}`) && r.text.includes(needle));
  const hasButtons = (m: TranscriptMessage) => m.blocks.some((b) => (b as { type?: string }).type === 'actions');
  const blockText = (m: TranscriptMessage) => JSON.stringify(m.blocks);

  beforeAll(async () => {
    for (const ns of ['shop', 'argocd']) store.create(store.registry.byKind('Namespace'), undefined, namespaceManifest(ns));
    server = await startKubeServer({ store, users: USERS, bookmarkIntervalMs: 500 });
    kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'glidepath-truth-')), 'kubeconfig');
    server.writeKubeconfig(kubeconfigPath, 'prod', 'glidepath');
    slack = await startSlackStandIn({ botToken: 'xoxb-truth' });
    rollouts = new RolloutsController({ store, clock, podReadyMs: 1_000 }).start();
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
    await runFor(5_000);
  }, 60_000);

  afterAll(async () => {
    rollouts?.stop();
    await app?.close();
    await server?.close();
    await slack?.close();
    await dropPrefix(env.REDIS_PREFIX);
    if (kubeconfigPath) rmSync(dirname(kubeconfigPath), { recursive: true, force: true });
  });

  it('a Rollout resumed with kubectl: the thread says "resumed outside Glidepath" and the paused reply has no buttons left', async () => {
    const paused = await waitFor(async () => replyTo('checkout', 'waits for approval'), 'checkout paused reply');
    expect(hasButtons(paused)).toBe(true);
    await kubectlStatusPatch('checkout', { pauseConditions: null });
    await runFor(3_000);
    const said = await waitFor(async () => replyTo('checkout', 'resumed outside Glidepath'), '"resumed outside Glidepath" reply');
    expect(said.text).toContain('(step 2/3)');
    const settled = await waitFor(async () => {
      const now = replyTo('checkout', 'waits for approval');
      return now && !hasButtons(now) ? now : undefined;
    }, 'the paused reply without buttons');
    expect(blockText(settled)).toContain('Resumed outside Glidepath; these buttons are gone.');
    expect(settled.edits.length).toBeGreaterThan(0);
  }, 30_000);

  it('a Rollout aborted with kubectl: the thread says "aborted outside Glidepath" and the paused reply has no buttons left', async () => {
    const paused = await waitFor(async () => replyTo('cart', 'waits for approval'), 'cart paused reply');
    expect(hasButtons(paused)).toBe(true);
    await kubectlStatusPatch('cart', { abort: true });
    await runFor(3_000);
    const said = await waitFor(async () => replyTo('cart', 'was aborted outside Glidepath'), '"aborted outside Glidepath" reply');
    expect(said.text).toContain('traffic went back to the stable version');
    const settled = await waitFor(async () => {
      const now = replyTo('cart', 'waits for approval');
      return now && !hasButtons(now) ? now : undefined;
    }, 'the paused reply without buttons');
    expect(blockText(settled)).toContain('Aborted outside Glidepath; these buttons are gone.');
    // Each thing said once.
    expect(replies().filter((r) => r.text.includes('prod/shop/cart') && r.text.includes('aborted')).length).toBe(1);
  }, 30_000);
});
