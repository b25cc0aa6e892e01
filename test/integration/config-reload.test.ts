/**
 * Issue 22 item 4, through the watch of a stand-in cluster, with the config mounted as a ConfigMap
 * is (a symlink swap in a real temp folder, test/helpers/config-mount.ts): a reload that adds a
 * stage to a template shows in the next release's thread; a reload that adds a pipeline routes its
 * facts; a pipeline removed by a reload keeps its in-flight release (record and thread), which
 * goes on to complete in the same thread once the pipeline is back; a broken file (YAML, a field,
 * a field that needs a restart) changes nothing, is counted and logged by path.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const FLEET = 'C0FLEET';
const LEGACY = 'C0LEGACY';
const STEPS = [{ setWeight: 50 }, { pause: {} }];
const tracked = (app: string) => ({ 'hangar.io/release-tracked': 'true', 'app.kubernetes.io/name': app });
const PROD_STAGE = `
      - { name: prod, cluster: "{{cluster}}", rollouts: { namespace: shop, selector: "hangar.io/release-tracked=true,app.kubernetes.io/name={{value}}" } }`;
const DR_STAGE = `
      - { name: dr, cluster: "{{cluster}}", rollouts: { namespace: pay, selector: "hangar.io/release-tracked=true,app.kubernetes.io/name={{value}}" } }`;
const TEMPLATE = `
  - name: "{{value}}"
    channel: ${FLEET}
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop], selector: "hangar.io/release-tracked=true" }
      groupBy: { label: app.kubernetes.io/name }
    stages:${PROD_STAGE}`;
const LEGACY_PIPELINE = `pipelines:
  - name: legacy
    channel: ${LEGACY}
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=legacy" } }
`;

describe('a config that reloads without a restart', () => {
  let world: WatchedWorld;
  const logged: string[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void logged.push(line) });
  const threadOf = (releaseId: string, channel = FLEET): TranscriptMessage | undefined => world.slack.transcript.messages(channel).find((m) => m.text.startsWith(`Release ${releaseId} `));
  const recordOf = (pipeline: string, releaseId: string) => world.app.store.get(pipeline, releaseId);
  const metrics = async (): Promise<string> => (await fetch(`${world.app.url}/metrics`)).text();
  const reloads = async (result: string): Promise<number> => Number(new RegExp(`glidepath_config_reload_total\\{result="${result}"\\} (\\d+)`).exec(await metrics())?.[1] ?? 0);
  const readyHash = async (): Promise<string | undefined> => ((await (await fetch(`${world.app.url}/readyz`)).json()) as { config?: { hash: string } }).config?.hash;
  /** Swaps the mounted file and waits for the reload's result to be counted. */
  async function swap(text: string, result: 'applied' | 'refused'): Promise<void> {
    const before = await reloads(result);
    world.mount!.swap(text);
    await waitFor(async () => ((await reloads(result)) > before ? true : undefined), `the reload counted as ${result}`);
  }
  const pausedIn = (releaseId: string, channel = FLEET) => waitFor(async () => (threadOf(releaseId, channel)?.replies ?? []).find((r) => r.text.includes('waits for approval')), `${releaseId} paused`);
  const completes = (pipeline: string, releaseId: string) => waitFor(async () => ((await recordOf(pipeline, releaseId))?.status === 'Complete' ? true : undefined), `${releaseId} complete`);

  beforeAll(async () => {
    world = await startWatchedWorld({ channel: FLEET, steps: STEPS, namespaces: ['shop', 'pay', 'argocd'], templates: TEMPLATE, mountConfig: { logger } });
    // A Rollout's first version goes out at once (no canary steps).
    world.deploy('cart', '1.0.0', 'cart-1', tracked('cart'));
    await world.runFor(3_000);
    await completes('cart', 'cart-1');
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  it('shows the running file\'s hash on /readyz and /metrics', async () => {
    expect(await readyHash()).toBe(world.mount!.hash);
    expect(await metrics()).toContain(`glidepath_config_info{hash="${world.mount!.hash}"} 1`);
  });

  it('a reload adds a stage to a template (and a namespace to its generator): the next release\'s thread shows it', async () => {
    expect((await recordOf('cart', 'cart-1'))?.stages.map((s) => s.name)).toEqual(['prod']);
    await swap(world.mount!.text.replace(PROD_STAGE, PROD_STAGE + DR_STAGE).replace('namespaces: [shop]', 'namespaces: [shop, pay]'), 'applied');
    expect(await readyHash()).toBe(world.mount!.hash);
    expect(await metrics()).toContain(`glidepath_config_info{hash="${world.mount!.hash}"} 1`);
    world.deploy('cart', '2.0.0', 'cart-2', tracked('cart'));
    world.deploy('cart', '2.0.0', 'cart-2', tracked('cart'), { namespace: 'pay' });
    await world.runFor(3_000);
    // The pay namespace is watched now (the generator's new namespace), and its Rollout routes to the new stage.
    await waitFor(async () => (Object.keys((await recordOf('cart', 'cart-2'))?.stages.find((s) => s.name === 'dr')?.targets ?? {}).includes('prod/pay/cart') ? true : undefined), 'cart-2 sees its dr target');
    expect((await recordOf('cart', 'cart-2'))?.stages.map((s) => s.name)).toEqual(['prod', 'dr']);
    await waitFor(async () => (JSON.stringify(threadOf('cart-2')?.blocks ?? []).includes('*dr* —') ? true : undefined), 'the cart-2 thread shows the dr stage');
  });

  it('a reload adds a pipeline, and its facts route to it', async () => {
    await swap(world.mount!.text.replace('pipelines: []\n', LEGACY_PIPELINE), 'applied');
    world.deploy('old', '1.0.0', 'old-1', { 'app.kubernetes.io/part-of': 'legacy' });
    await world.runFor(3_000);
    await completes('legacy', 'old-1');
    await waitFor(async () => threadOf('old-1', LEGACY), 'the old-1 thread in the new pipeline\'s channel');
    // The next release pauses at its canary step: in flight.
    world.deploy('old', '2.0.0', 'old-2', { 'app.kubernetes.io/part-of': 'legacy' });
    await world.runFor(3_000);
    await pausedIn('old-2', LEGACY);
    expect((await recordOf('legacy', 'old-2'))?.status).toBe('Paused');
  });

  it('a pipeline removed by a reload keeps its in-flight release: record and thread stay, and it completes in the same thread once the pipeline is back', async () => {
    await world.settled();
    const thread = JSON.stringify(threadOf('old-2', LEGACY));
    const withLegacy = world.mount!.text;
    await swap(withLegacy.replace(LEGACY_PIPELINE, 'pipelines: []\n'), 'applied');
    await world.runFor(3_000);
    await world.settled();
    expect((await recordOf('legacy', 'old-2'))?.status).toBe('Paused');
    expect(JSON.stringify(threadOf('old-2', LEGACY))).toBe(thread);
    await swap(withLegacy, 'applied');
    await world.kubectlStatusPatch('old', { pauseConditions: null });
    await world.runFor(3_000);
    await completes('legacy', 'old-2');
    await waitFor(async () => (threadOf('old-2', LEGACY)?.replies ?? []).find((r) => r.text.includes('is complete')), 'old-2: the release-complete reply in its thread');
    expect(world.slack.transcript.messages(LEGACY).filter((m) => m.text.startsWith('Release old-2 '))).toHaveLength(1);
  });

  it('a broken reload changes nothing: refused, counted and logged by path, the running config stays', async () => {
    const running = world.mount!.hash;
    const good = world.mount!.text;
    await swap('clusters: [\n  - name: prod\n', 'refused');
    expect(logged.some((l) => l.includes('config reload refused') && l.includes('YAML: Block collections are not allowed within flow collections'))).toBe(true);
    await swap(good.replace(`channel: ${FLEET}`, 'channel: "#fleet"'), 'refused');
    expect(logged.some((l) => l.includes('config reload refused') && l.includes('pipelineTemplates[0].channel: must be a Slack channel id such as C0123ABCD (not a #name)'))).toBe(true);
    await swap(good.replace('watchLeaseSeconds: 2', 'watchLeaseSeconds: 3'), 'refused');
    expect(logged.some((l) => l.includes('settings.watchLeaseSeconds: needs a restart'))).toBe(true);
    expect(await readyHash()).toBe(running);
    expect(await metrics()).toContain(`glidepath_config_info{hash="${running}"} 1`);
    expect(await reloads('refused')).toBe(3);
    // Routing is the running config's: the next release still has both stages.
    world.deploy('cart', '3.0.0', 'cart-3', tracked('cart'));
    world.deploy('cart', '3.0.0', 'cart-3', tracked('cart'), { namespace: 'pay' });
    await world.runFor(3_000);
    await waitFor(async () => (Object.keys((await recordOf('cart', 'cart-3'))?.stages.find((s) => s.name === 'dr')?.targets ?? {}).includes('prod/pay/cart') ? true : undefined), 'cart-3 routed by the running config');
    // The good file again is the running one: unchanged.
    const unchanged = await reloads('unchanged');
    world.mount!.swap(good);
    await waitFor(async () => ((await reloads('unchanged')) > unchanged ? true : undefined), 'the good file again counted as unchanged');
    expect(await readyHash()).toBe(running);
  });
});
