/**
 * Issue 22 items 1 and 2, through the watch of a stand-in cluster: one pipeline template over the
 * release-tracked apps of a namespace (grouped by `app.kubernetes.io/name`) gives each app its
 * own pipeline and threads with no pipeline written per app; an app that appears later, in
 * another namespace too, gets its own with no config change; an app removed retires its pipeline
 * and nobody else's threads move; an app's `glidepath.io/channel` annotation routes its threads
 * to its own channel, and a channel the bot is not in is said and counted, not a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import { READ_TOKEN } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const FLEET = 'C0FLEET';
const SEARCH = 'C0SEARCH';
const NO_BOT = 'C0NOBOT';
const STEPS = [{ setWeight: 50 }, { pause: {} }];
const APPS = ['cart', 'catalog', 'checkout', 'payments', 'search'] as const;
const channelOf = (app: string): string => (app === 'search' ? SEARCH : FLEET);
const labelsOf = (app: string) => ({ 'hangar.io/release-tracked': 'true', 'app.kubernetes.io/name': app });
const annotationsOf = (app: string): Record<string, string> =>
  app === 'search' ? { 'glidepath.io/channel': SEARCH } : app === 'legacy' ? { 'glidepath.io/channel': NO_BOT } : app === 'ledger' ? { 'glidepath.io/owners': 'team-pay, someone@example.com' } : {};
/** Alice is in team-pay (the identity map): the ledger app is hers. */
const ALICE = 'U0ALICE';
const IDENTITIES = `identities:
  users:
    ${ALICE}: { user: alice@example.com, groups: [team-pay] }`;

const TEMPLATE = `
  - name: "{{value}}"
    channel: ${FLEET}
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop, pay], selector: "hangar.io/release-tracked=true" }
      groupBy: { label: app.kubernetes.io/name }
    stages:
      - { name: prod, cluster: "{{cluster}}", rollouts: { namespace: "{{namespace}}", selector: "hangar.io/release-tracked=true,app.kubernetes.io/name={{value}}" } }`;

describe('one pipeline template over the apps of a namespace', () => {
  let world: WatchedWorld;
  const threadOf = (releaseId: string, channel = FLEET): TranscriptMessage | undefined => world.slack.transcript.messages(channel).find((m) => m.text.startsWith(`Release ${releaseId} `));
  const statusOf = async (pipeline: string, releaseId: string) => (await world.app.store.get(pipeline, releaseId))?.status;
  /** What the read API answers for a pipeline's releases: 200 while the pipeline is there, 404 once it is not. */
  const releasesOf = async (pipeline: string): Promise<{ status: number; body: { releases?: { releaseId: string }[] } }> => {
    const res = await fetch(`${world.app.url}/v1/releases?pipeline=${pipeline}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    return { status: res.status, body: (await res.json()) as { releases?: { releaseId: string }[] } };
  };
  const metrics = async (): Promise<string> => (await fetch(`${world.app.url}/metrics`)).text();

  /** Rolls each app to its release at once, approves each one's pause as kubectl would, and waits for every thread to complete. */
  async function releaseAll(apps: readonly { app: string; releaseId: string; namespace?: string }[]): Promise<void> {
    for (const { app, releaseId, namespace } of apps) world.deploy(app, releaseId, releaseId, labelsOf(app), { ...(namespace ? { namespace } : {}), annotations: annotationsOf(app) });
    await world.runFor(3_000);
    for (const { app, releaseId } of apps) await waitFor(async () => (threadOf(releaseId, channelOf(app))?.replies ?? []).find((r) => r.text.includes('waits for approval')), `${releaseId} paused`);
    for (const { app, namespace } of apps) await world.kubectlStatusPatch(app, { pauseConditions: null }, namespace);
    await world.runFor(3_000);
    for (const { app, releaseId } of apps) await waitFor(async () => ((await statusOf(app, releaseId)) === 'Complete' ? true : undefined), `${releaseId} complete`);
  }

  beforeAll(async () => {
    world = await startWatchedWorld({ channel: FLEET, steps: STEPS, namespaces: ['shop', 'pay', 'argocd'], templates: TEMPLATE, notInChannel: [NO_BOT], extraConfig: IDENTITIES });
    for (const app of APPS) world.deploy(app, '1.0.0', `${app}-1`, labelsOf(app), { annotations: annotationsOf(app) });
    await world.runFor(3_000);
    for (const app of APPS) await waitFor(async () => ((await statusOf(app, `${app}-1`)) === 'Complete' ? true : undefined), `${app}-1 complete`);
    await releaseAll(APPS.map((app) => ({ app, releaseId: `${app}-2` })));
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  it('gives five independent threads, one per app, that each complete on its own app', async () => {
    for (const app of APPS) {
      expect(await statusOf(app, `${app}-2`)).toBe('Complete');
      await waitFor(async () => (threadOf(`${app}-2`, channelOf(app))?.replies ?? []).find((r) => r.text.includes('is complete')), `${app}-2: the release-complete reply`);
      // Its own pipeline: the stage holds only this app's Rollout, so nothing mixes apps and nothing waits for another app.
      const thread = threadOf(`${app}-2`, channelOf(app))!;
      expect(thread.replies.filter((r) => r.text.includes('mixes apps'))).toHaveLength(0);
      const record = await world.app.store.get(app, `${app}-2`);
      expect(Object.keys(record?.stages.find((st) => st.name === 'prod')?.targets ?? {})).toEqual([`prod/shop/${app}`]);
      const listed = await releasesOf(app);
      expect(listed.status).toBe(200);
      expect(listed.body.releases?.map((r) => r.releaseId).sort()).toEqual([`${app}-1`, `${app}-2`]);
    }
  });

  it('routes an app to the channel its glidepath.io/channel annotation names, the others to the template\'s', async () => {
    expect(threadOf('search-2', SEARCH)).toBeDefined();
    expect(threadOf('search-2', FLEET)).toBeUndefined();
    expect(world.slack.transcript.messages(SEARCH).map((m) => m.text.split(' ')[1])).toEqual(expect.arrayContaining(['search-1', 'search-2']));
    expect(world.slack.transcript.messages(SEARCH).some((m) => !m.text.includes('search-'))).toBe(false);
    expect(threadOf('cart-2', FLEET)).toBeDefined();
  });

  it('a channel the bot is not in is said and counted, and the other apps go on', async () => {
    world.deploy('legacy', '1.0.0', 'legacy-1', labelsOf('legacy'), { annotations: annotationsOf('legacy') });
    await world.runFor(3_000);
    await waitFor(async () => ((await statusOf('legacy', 'legacy-1')) === 'Complete' ? true : undefined), 'legacy-1 complete');
    await waitFor(async () => /glidepath_slack_permanent_errors_total\{error="not_in_channel",method="chat\.postMessage"\} [1-9]/.test(await metrics()) || undefined, 'not_in_channel counted');
    expect(world.slack.transcript.messages(NO_BOT)).toHaveLength(0);
    // Looked up once when the pipeline appeared: counted (and logged) as a channel the bot cannot post in.
    const unusable = /glidepath_template_problems_total\{template="\{\{value\}\}",reason="channel_unusable"\} (\d+)\n/;
    await waitFor(async () => unusable.exec(await metrics())?.[1] === '1' || undefined, 'the channel counted as unusable once');
    await releaseAll([{ app: 'cart', releaseId: 'cart-3' }]);
    expect(threadOf('cart-3')).toBeDefined();
  });

  it('a sixth app appearing later, in another namespace, gets its pipeline and thread with no config change', async () => {
    expect((await releasesOf('ledger')).status).toBe(404);
    world.deploy('ledger', '1.0.0', 'ledger-1', labelsOf('ledger'), { namespace: 'pay', annotations: annotationsOf('ledger') });
    await world.runFor(3_000);
    await waitFor(async () => ((await statusOf('ledger', 'ledger-1')) === 'Complete' ? true : undefined), 'ledger-1 complete');
    await releaseAll([{ app: 'ledger', releaseId: 'ledger-2', namespace: 'pay' }]);
    const record = await world.app.store.get('ledger', 'ledger-2');
    expect(Object.keys(record?.stages.find((st) => st.name === 'prod')?.targets ?? {})).toEqual(['prod/pay/ledger']);
    await waitFor(async () => (threadOf('ledger-2')?.replies ?? []).find((r) => r.text.includes('is complete')), 'ledger-2: the release-complete reply');
  });

  it('an app removed retires its pipeline; its thread stays and no other thread moves', async () => {
    await world.settled();
    const others = APPS.filter((app) => app !== 'checkout');
    const before = others.map((app) => JSON.stringify(threadOf(`${app}-2`, channelOf(app))));
    const removedThread = JSON.stringify(threadOf('checkout-2'));
    world.remove('checkout');
    await world.runFor(1_000);
    await waitFor(async () => ((await releasesOf('checkout')).status === 404 ? true : undefined), 'checkout retired');
    await world.runFor(3_000);
    await world.settled();
    expect(others.map((app) => JSON.stringify(threadOf(`${app}-2`, channelOf(app))))).toEqual(before);
    expect(JSON.stringify(threadOf('checkout-2'))).toBe(removedThread);
    // Its record is kept until its TTL; the other pipelines are all still there and still release.
    expect(await statusOf('checkout', 'checkout-2')).toBe('Complete');
    for (const app of others) expect((await releasesOf(app)).status).toBe(200);
    await releaseAll([{ app: 'payments', releaseId: 'payments-3' }]);
    expect(threadOf('payments-3')).toBeDefined();
  });

  it('says which pipelines the template generated, for which app, and which channel cannot be posted in', async () => {
    const sender = new SignedSender({ url: `${world.app.url}/slack/events`, signingSecret: 'watched-world-signing-secret' });
    const ask = async (text: string): Promise<string> => {
      const responseUrl = world.slack.responseUrl();
      expect((await sender.slashCommand({ command: '/glidepath', text, userId: ALICE, channelId: FLEET, responseUrl })).status).toBe(200);
      return String((await waitFor(async () => world.slack.transcript.responses.find((r) => responseUrl.endsWith(r.id)), `the answer to ${text}`)).body.text);
    };
    const all = await ask('status');
    // checkout was removed: its pipeline retired and is no longer listed.
    expect(all).toContain('*Pipelines*: 0 from the config, 6 generated');
    expect(all).toContain('template `{{value}}` (6): cart, catalog, ledger, legacy, payments, search');
    expect(all).toContain(`:warning: *legacy* (channel \`${NO_BOT}\`): the bot is not a member of ${NO_BOT}`);
    expect(all).not.toMatch(/\*(cart|search|ledger)\* \(channel/);
    expect(await ask('status ledger')).toContain('*ledger* is generated by template {{value}} for ledger (pay on prod).');
    expect(await ask('status search')).toContain('for search (shop on prod; channel from its objects’ annotation)');

    const res = await fetch(`${world.app.url}/v1/pipelines`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { total: number; pipelines: { name: string; channel: string; owners: string[]; origin: Record<string, unknown> }[] };
    expect(body.total).toBe(6);
    expect(body.pipelines.find((p) => p.name === 'search')).toMatchObject({ channel: SEARCH, origin: { source: 'template', template: '{{value}}', group: 'search', namespace: 'shop', cluster: 'prod', channelFrom: 'annotation' } });
    expect(body.pipelines.find((p) => p.name === 'ledger')).toMatchObject({ channel: FLEET, owners: ['team-pay', 'someone@example.com'], origin: { namespace: 'pay', channelFrom: 'template' } });
    expect((await fetch(`${world.app.url}/v1/pipelines?template=other`, { headers: { authorization: `Bearer ${READ_TOKEN}` } }).then((r) => r.json())) as unknown).toEqual({ total: 0, pipelines: [] });
  });

  it('the App Home shows a person their own apps first (owners from the app\'s annotation, the person from the identity map)', async () => {
    const sender = new SignedSender({ url: `${world.app.url}/slack/events`, signingSecret: 'watched-world-signing-secret' });
    const home = async (user: string): Promise<string[]> => {
      world.slack.transcript.homeViews.delete(user);
      expect((await sender.event({ type: 'app_home_opened', user, channel: 'D1', tab: 'home', event_ts: '1.1' })).status).toBe(200);
      const view = (await waitFor(async () => world.slack.transcript.homeViews.get(user), `${user}'s Home`)) as { blocks: { type: string; text?: { text: string } }[] };
      return view.blocks.flatMap((b) => (b.type === 'header' || b.type === 'section' ? [b.text!.text] : []));
    };
    const alice = await home(ALICE);
    expect(alice[0]).toBe('Your apps');
    expect(alice[1]).toBe(`*ledger* in <#${FLEET}>`);
    // Finished releases are not shown (the tab lists active ones): the other pipelines follow at once.
    expect(alice[2]).toBe('Other pipelines');
    expect(alice.indexOf(`*cart* in <#${FLEET}>`)).toBeGreaterThan(alice.indexOf('Other pipelines'));
    // Somebody the identity map does not know sees every pipeline, in the config's order.
    const other = await home('U0NOBODY');
    expect(other[0]).toBe('Active releases');
    expect(other).not.toContain('Other pipelines');
    expect(other[1]).toBe(`*cart* in <#${FLEET}>`);
  });
});
