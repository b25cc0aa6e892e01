/**
 * The sandbox's local Slack in a real browser (Debian's Chromium driven by playwright-core): a
 * person loads the page, sees the paused reply, clicks Approve, types `/glidepath status`, opens
 * the abort dialog and cancels it. Every click and command travels as a signed Slack request to
 * a real Glidepath, which acts on the simulated clusters; nothing in between is mocked.
 * Without /usr/bin/chromium the test is skipped (.ci/run installs it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/env.js';
import { parseConfigFile } from '../../src/config/file.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { startSampleWorld, type SampleWorld } from '../../sandbox/kube/world.js';
import { sampleWorldConfig } from '../../sandbox/kube/world-config.js';
import { SignedSender } from '../../sandbox/slack/sender.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { pipelineChannels, startSandboxWeb, type SandboxWeb } from '../../sandbox/web/server.js';
import { waitFor } from '../helpers/wait.js';
import { CI_TOKEN, DEV_TOKEN, dropPrefix, INGEST_TOKEN, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/browser/', import.meta.url));
const BOT_TOKEN = 'xoxb-browser-test';
const SIGNING_SECRET = 'browser-test-signing-secret';
const YOU = 'U0SANDBOX';
/** The checkout pipeline's channel in the sample world's config. */
const CHANNEL = 'C0SANDBOX1';
const RELEASE = `rel-browser-${Date.now().toString(36)}`;
/** Long enough for a loaded two-core machine; only ends a hung wait, never asserts a duration. */
const WAIT = 30_000;

if (!HAS_CHROMIUM) console.warn(`browser test skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`);

describe.skipIf(!HAS_CHROMIUM)(`the sandbox page in Chromium${HAS_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is missing)`}`, () => {
  let env: Env | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'gp-browser-'));
  const clock = new FakeClock(Date.now());
  let slack: SlackStandIn;
  let app: Glidepath;
  let world: SampleWorld;
  let web: SandboxWeb;
  let browser: BrowserContext;
  let page: Page;

  /** The clusters move only when the test says so; then every notification is delivered. */
  async function advance(ms: number): Promise<void> {
    await clock.advance(ms);
    for (const c of Object.values(world.clusters)) for (const n of c.notifications) await n.idle();
  }

  /** Moves the clusters on, 5 s at a time, until Glidepath's Slack shows what `probe` looks for. */
  async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
    await waitFor(async () => {
      if (await probe()) return true;
      await advance(5_000);
      return false;
    }, what, WAIT);
  }

  /** Whether a thread has a reply, with its Approve button, saying the Rollout waits for approval. */
  function waitsForApproval(rollout: string): boolean {
    return slack.transcript.messages(CHANNEL).some((m) =>
      m.replies.some((r) => {
        const shown = JSON.stringify(r.blocks);
        return shown.includes(`${rollout}\` is paused`) && shown.includes('waits for approval') && shown.includes('glidepath.approve');
      }),
    );
  }

  beforeAll(async () => {
    rmSync(join(ARTIFACTS, 'failure.png'), { force: true });
    slack = await startSlackStandIn({ botToken: BOT_TOKEN, users: { [YOU]: { name: 'you', real_name: 'You (sandbox)' } }, usergroups: { S0SANDBOXSRE: [YOU] } });
    const kubeconfigPath = join(dir, 'kubeconfig');
    const config = parseConfigFile(sampleWorldConfig({ kubeconfigPath, approversEverywhere: ['S0SANDBOXSRE'] }), 'sandbox-config.yaml');
    env = testEnv({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl });
    app = await startTestGlidepath(config, env);
    world = await startSampleWorld({
      clock,
      kubeconfigPath,
      webhooks: { rolloutsUrl: `${app.url}/v1/facts/rollouts`, argocdUrl: `${app.url}/v1/facts/argocd`, tokens: { prod: INGEST_TOKEN, dev: DEV_TOKEN } },
    });
    const sender = new SignedSender({ url: `${app.url}/slack/events`, signingSecret: SIGNING_SECRET });
    web = await startSandboxWeb({ slack, sender, you: { id: YOU, name: 'you' }, channels: pipelineChannels(config.pipelines), port: 0 });
    browser = await chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1440, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());

    const announced = await fetch(`${app.url}/v1/releases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CI_TOKEN}` },
      body: JSON.stringify({ releaseId: RELEASE, pipeline: 'checkout', images: ['registry.example.com/shop/checkout:1.29.0'], commit: 'a1b2c3d4e5f6', author: 'you', pullRequestUrl: 'https://git.example.com/shop/checkout/pull/129' }),
    });
    expect(announced.status).toBeLessThan(300);
    world.releaseCheckout('1.29.0', RELEASE);
    await until(() => waitsForApproval('shop/checkout-dev') && waitsForApproval('shop/checkout-staging'), 'the paused replies of dev and staging in Slack');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await world?.stop();
    await app?.close();
    await slack?.close();
    if (env) await dropPrefix(env.REDIS_PREFIX);
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the paused reply, approves it with a click, answers /glidepath status, and cancels the abort dialog', async () => {
    try {
      await person();
    } catch (err) {
      // What the page showed when it failed, kept next to the passing run's screenshots.
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'failure.png') }).catch(() => undefined);
      throw err;
    }
  }, 120_000);

  it('draws Slack markup and never runs or loads what a message says', async () => {
    const hostile = '&lt;img src=x onerror="window.owned=1"&gt; <img src=x onerror=window.owned=2> <javascript:window.owned=3|bad link>';
    const text = `*bold* _italic_ ~gone~ \`code\` <https://example.com/a?b=1&amp;c=2|a link> <@${YOU}> <!date^1700000000^{date_num}|fallback> :tada: ${hostile}\n\`\`\`<b>not bold</b>\`\`\``;
    const posted = await fetch(`${slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${BOT_TOKEN}` },
      // A channel of its own: Slack's one message a second per channel holds for the thread's.
      body: JSON.stringify({ channel: 'C0MARKUP', text: 'markup', blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }, { type: 'context', elements: [{ type: 'mrkdwn', text: '_context_ line' }] }] }),
    });
    const answer = await posted.text();
    expect(JSON.parse(answer), answer).toMatchObject({ ok: true });
    await page.goto(web.url);
    await page.locator('[data-channel="C0MARKUP"]').click({ timeout: WAIT });
    const message = page.locator('#messages .message', { hasText: 'a link' });
    await message.waitFor({ timeout: WAIT });
    expect(await message.locator('b').innerText()).toBe('bold');
    expect(await message.locator('i').first().innerText()).toBe('italic');
    expect(await message.locator('s').innerText()).toBe('gone');
    expect(await message.locator('code').innerText()).toBe('code');
    expect(await message.locator('a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([['a link', 'https://example.com/a?b=1&c=2']]);
    expect(await message.locator('.mention').innerText()).toBe('@you');
    expect(await message.locator('time.date').innerText()).toBe('2023-11-14');
    expect(await message.locator('pre').innerText()).toBe('<b>not bold</b>');
    expect(await message.locator('.block-context').innerText()).toBe('context line');
    const shown = await message.innerText();
    expect(shown).toContain('🎉');
    expect(shown).toContain('<img src=x onerror="window.owned=1">');
    expect(shown).toContain('<javascript:window.owned=3|bad link>');
    expect(await message.locator('img').count()).toBe(0);
    mkdirSync(ARTIFACTS, { recursive: true });
    // The page is redrawn on every update, so a message element can be replaced mid-capture: shoot the page.
    await page.screenshot({ path: join(ARTIFACTS, 'markup.png') });
    expect(await page.evaluate(() => (globalThis as { owned?: number }).owned)).toBeUndefined();
  }, 60_000);

  async function person(): Promise<void> {
    await page.goto(web.url);
    const thread = page.locator('#thread');
    // The release thread, opened as a person would from its "replies" link.
    const parent = page.locator('#messages .message', { hasText: `Release ${RELEASE} — checkout` });
    await parent.locator('.thread-summary').click({ timeout: WAIT });
    const pausedReply = thread.locator('.message', { hasText: 'dev/shop/checkout-dev is paused (step 2/6, weight 20%) and waits for approval' });
    await pausedReply.waitFor({ timeout: WAIT });
    // Slack markup is drawn, not printed: emoji, bold, code, no raw tokens.
    expect(await pausedReply.innerText()).toContain('⏸️');
    expect(await pausedReply.locator('code').first().innerText()).toBe('dev/shop/checkout-dev');
    expect(await page.locator('body').innerText()).not.toMatch(/:double_vertical_bar:|<@U0SANDBOX>|<!date\^/);

    // Approve: the click reaches Glidepath signed, the cluster moves, the reply says who did what
    // (first the click's own line, then, once the pause has ended, how it ended).
    await pausedReply.getByRole('button', { name: 'Approve' }).click();
    const audit = thread.locator('.message', { hasText: /approved step 2 of dev\/shop\/checkout-dev: the canary moves on \(by @you\)|Resumed through Glidepath by @you/ });
    await audit.waitFor({ timeout: WAIT });
    expect(await audit.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await audit.first().locator('.edited').count()).toBe(1);
    const rootMessage = thread.locator('.message').first();
    const moved = rootMessage.filter({ hasText: /dev — \w+ · step [3-6]\/6/ });
    await until(async () => (await moved.count()) > 0, 'the dev stage past step 2 on the page');

    // A slash command: the answer is shown to you only, where you typed it.
    await page.locator('#composer-input').fill('/glidepath status');
    await page.locator('#composer-input').press('Enter');
    const status = page.locator('#messages .message-ephemeral', { hasText: '/glidepath status' });
    await status.waitFor({ timeout: WAIT });
    expect(await status.innerText()).toMatch(new RegExp(`Only visible to you[\\s\\S]*checkout[\\s\\S]*release ${RELEASE}`));

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'sandbox.png') });

    // A button's own confirmation: Cancel sends nothing.
    const staging = thread.locator('.message', { hasText: 'prod/shop/checkout-staging is paused' });
    const answersBefore = slack.transcript.responses.length;
    await staging.getByRole('button', { name: 'Abort' }).click();
    const confirm = page.locator('#confirm');
    await confirm.getByText('Abort the rollout?').waitFor({ timeout: WAIT });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden', timeout: WAIT });

    // The abort dialog (views.open): it names what would be aborted; Cancel closes it and changes nothing.
    await page.locator('#composer-input').fill('/glidepath abort prod/shop/checkout-staging');
    await page.locator('#composer-input').press('Enter');
    const modal = page.locator('#modal');
    await modal.getByText('Abort the Rollout?').waitFor({ timeout: WAIT });
    expect(await modal.innerText()).toMatch(/Cluster: prod[\s\S]*Rollout: checkout-staging/);
    await page.screenshot({ path: join(ARTIFACTS, 'abort-dialog.png') });
    await modal.getByRole('button', { name: 'Cancel' }).click();
    await modal.waitFor({ state: 'hidden', timeout: WAIT });

    const { store } = world.clusters.prod;
    const rollout = store.get(store.registry.byKind('Rollout'), 'shop', 'checkout-staging') as { status?: { abort?: boolean } };
    expect(rollout.status?.abort).not.toBe(true);
    expect(await staging.getByRole('button', { name: 'Abort' }).count()).toBe(1);
    // No answer since: the cancelled confirmation and the cancelled dialog sent Glidepath nothing to act on.
    expect(slack.transcript.responses.length).toBe(answersBefore);

    // The App Home: opening it sends app_home_opened; Glidepath publishes the active releases.
    await page.locator('#home-link').click();
    await page.locator('.home-view', { hasText: 'Active releases' }).waitFor({ timeout: WAIT });
    expect(await page.locator('.home-view').innerText()).toContain(RELEASE);
  }
});

