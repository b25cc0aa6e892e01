/**
 * `npm run sandbox`'s story with a person at its page (Debian's Chromium driven by playwright-core)
 * and at its terminal: without --auto the story holds at each decision until the person clicks in
 * the page or presses Enter, and says so in both places; the freshness gate's whole exchange
 * (typed approve, stale list, Refresh and approve, success) shows in the page and in the release
 * thread; the Abort dialog opens over its own channel and closes when the story answers it; the
 * bad build's analysis chart and the first release's timeline are drawn in their threads.
 * The sandbox runs as the README says, a child process; nothing in between is mocked.
 * Without /usr/bin/chromium the test is skipped (.ci/run installs it).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { readPngHeader } from '../slack/support/png.js';

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const MAIN = fileURLToPath(new URL('../../sandbox/main.ts', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/browser/', import.meta.url));
/** Long enough for a loaded two-core machine; only ends a hung wait, never asserts a duration. */
const WAIT = 90_000;
const CHECKOUT = 'C0SANDBOX1';
const APPSET = 'C0SANDBOX2';

describe.skipIf(!HAS_CHROMIUM)(`the sandbox's story waits for the person at its page${HAS_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is missing)`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-browser-story-'));
  let child: ChildProcessWithoutNullStreams;
  let exited: Promise<number | null>;
  let out = '';
  let browser: BrowserContext;
  let page: Page;

  /** Waits for the terminal to print what `pattern` looks for. */
  /** Waits until the terminal shows what `probe` finds; a failure ends with the terminal as it was then. */
  const inTerminal = async <T>(probe: (text: string) => T | undefined | false, what: string): Promise<T> => {
    try {
      return await waitFor(async () => probe(out), what, WAIT);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- the terminal:\n${out.slice(-4000)}`, { cause: err });
    }
  };
  const terminal = (pattern: RegExp, what: string) => inTerminal((text) => pattern.test(text), what);
  /** Waits for the page's line about what the story waits for to name `text`. */
  const pageWaitsFor = (text: string) => page.locator('#story-bar .story-line', { hasText: text }).waitFor({ timeout: WAIT });
  const pressEnter = () => child.stdin.write('\n');

  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--speed', '20'], {
      env: { ...process.env, PORT: '0', SANDBOX_DIR: dir, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    browser = await chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1440, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds at each decision until the page or Enter acts; the freshness exchange shows in the page and the thread; the story closes the dialog it answers', async () => {
    try {
      await person();
    } catch (err) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'story-failure.png') }).catch(() => undefined);
      throw err;
    }
  }, 400_000);

  /**
   * Opens the thread under `parent` in the channel shown and finds the shared image whose title
   * `title` matches: the browser decoded it (its natural size), and its src serves a PNG of that size.
   */
  async function sharedImage(parent: string, title: RegExp): Promise<{ width: number; height: number; alt: string }> {
    await page.locator('#messages .message', { hasText: parent }).locator('.thread-summary').click({ timeout: WAIT });
    const figure = page.locator('#thread .shared-file').filter({ has: page.locator('.file-title', { hasText: title }) });
    const img = figure.locator('img.shared-image');
    await img.waitFor({ timeout: WAIT });
    // The page redraws the thread as replies arrive, so the <img> found may be replaced mid-step: each step is tried again on the new one.
    await waitFor(async () => img.scrollIntoViewIfNeeded({ timeout: 2_000 }).then(() => true), `the image "${title}" in view`, WAIT);
    // The page's <img>, as the browser has it (no DOM types in the tests' tsconfig).
    type Img = { complete: boolean; naturalWidth: number; naturalHeight: number; alt: string; src: string };
    const shown = await waitFor(
      async () =>
        img.evaluate((e) => {
          const i = e as unknown as Img;
          return i.complete && i.naturalWidth > 0 ? { width: i.naturalWidth, height: i.naturalHeight, alt: i.alt, src: i.src } : undefined;
        }, undefined, { timeout: 2_000 }),
      `the image "${title}" decoded in the page`,
      WAIT,
    );
    const served = await page.request.get(shown.src);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/png');
    const header = readPngHeader(await served.body());
    expect({ width: header.width, height: header.height }).toEqual({ width: shown.width, height: shown.height });
    return { width: shown.width, height: shown.height, alt: shown.alt };
  }

  async function person(): Promise<void> {
    const url = await waitFor(async () => /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1], `the page's URL\n${out}`, WAIT);
    await page.goto(url);

    // Chapter 2: the first pause waits for you, in the terminal and at the top of the page.
    await pageWaitsFor('dev/shop/checkout-dev waits for approval');
    expect(await page.locator('#story-bar').innerText()).toContain('or press Enter in the terminal');
    expect(out).toMatch(/… rel-1\.29\.0 · checkout: dev\/shop\/checkout-dev waits for approval: the story waits for you\./);
    await page.locator(`[data-channel="${CHECKOUT}"]`).click();
    await page.locator('#messages .message', { hasText: 'Release rel-1.29.0 — checkout' }).locator('.thread-summary').click({ timeout: WAIT });
    const devReply = page.locator('#thread .message', { hasText: 'dev/shop/checkout-dev is paused' });
    // Still held when the person clicks: nothing approved it meanwhile.
    expect(out).not.toMatch(/approved step 2 of dev\/shop\/checkout-dev/);
    await devReply.getByRole('button', { name: 'Approve' }).click({ timeout: WAIT });
    await terminal(/✓ rel-1\.29\.0 · checkout: dev\/shop\/checkout-dev waits for approval: decided in the page; the story goes on/, 'the story going on after the click');
    await page.locator('#thread .message', { hasText: /approved step 2 of dev\/shop\/checkout-dev: the canary moves on \(by @you\)|Resumed through Glidepath by @you/ }).first().waitFor({ timeout: WAIT });
    await page.locator('#story-bar .story-line', { hasText: 'dev/shop/checkout-dev' }).waitFor({ state: 'detached', timeout: WAIT });

    // The next pauses: Enter in the terminal approves each, as you. Staging and prod-eu pause about
    // together, in either order, and Enter decides the oldest open one (sandbox/story/decisions.ts):
    // each Enter is checked against whichever of them it approved.
    const escaped = (rollout: string) => rollout.replace(/\//g, '\\/');
    const left = ['prod/shop/checkout-staging', 'prod/shop/checkout-eu'];
    while (left.length > 0) {
      await page.locator('#story-bar .story-line', { hasText: new RegExp(`(${left.map(escaped).join('|')}) waits for approval`) }).first().waitFor({ timeout: WAIT });
      pressEnter();
      const approved = await inTerminal((text) => left.find((rollout) => new RegExp(`approved step 2 of ${escaped(rollout)}: the canary moves on \\(by @you\\)`).test(text)), `${left.join(' or ')} approved by you`);
      left.splice(left.indexOf(approved), 1);
    }

    // Chapter 3: the gated step, typed in the page; refused with the stale list, in the page and the thread.
    await pageWaitsFor('prod-us, the gated step, waits for /glidepath approve');
    await page.locator(`[data-channel="${APPSET}"]`).click();
    // This release's thread, picked as a person would: left to itself the pane follows the latest
    // activity, and the previous release's parent, re-drawn as its children move on, can take it.
    await page.locator('#messages .message', { hasText: /checkout:1\.29\.0\b[^)]*\) — checkout-appset/ }).locator('.thread-summary').click({ timeout: WAIT });
    await page.locator('#composer-input').fill('/glidepath approve checkout-appset@prod-us');
    await page.locator('#composer-input').press('Enter');
    const refusal = page.locator('#messages .message', { hasText: 'Not approving step 3 of checkout' });
    await refusal.waitFor({ timeout: WAIT });
    expect(await refusal.innerText()).toMatch(/used \/glidepath approve checkout-appset@prod-us[\s\S]*Stale \(\d\):[\s\S]*checkout-prod-us/);
    await page.locator('#thread .message', { hasText: /@you tried to approve RollingSync step 3 of prod\/argocd\/checkout at \w+: Not approving step 3/ }).waitFor({ timeout: WAIT });
    // Refresh and approve, once the story says the controllers caught up.
    await pageWaitsFor('the refusal offers Refresh and approve');
    // The newest refusal's button: the answer to the typed approve can still be landing (and
    // re-drawing the message) when the story says it waits. A click that met that re-draw is lost
    // as it would be for a person, who clicks again: once, if the story has not gone on.
    const decided = /✓ rel-1\.29\.0 · the refusal offers Refresh and approve: decided in the page/;
    await refusal.last().getByRole('button', { name: 'Refresh and approve' }).click();
    if (!(await waitFor(async () => decided.test(out), 'the first click', 20_000).catch(() => false))) {
      await refusal.last().getByRole('button', { name: 'Refresh and approve' }).click();
    }
    await terminal(decided, 'the story going on after Refresh and approve');
    const success = page.locator('#messages .message', { hasText: /approved RollingSync step 3 of prod\/argocd\/checkout at \w+: syncing checkout-prod-us \(by @you\)/ });
    await success.waitFor({ timeout: WAIT });
    expect(await success.locator('.edited').count()).toBe(1);
    expect(await success.getByRole('button', { name: 'Refresh and approve' }).count()).toBe(0);
    await page.locator('#thread .message', { hasText: /@you: approved RollingSync step 3 of prod\/argocd\/checkout/ }).waitFor({ timeout: WAIT });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'story-freshness.png') });

    // prod-us's pause and the promotion: Enter.
    await pageWaitsFor('prod/shop/checkout-us waits for approval');
    pressEnter();
    await pageWaitsFor('brave-lynx waits to be promoted to dev');
    pressEnter();
    await terminal(/→ brave-lynx \(1\.29\.0\) · you type: \/glidepath promote checkout-kargo@dev --freight brave-lynx/, 'the promotion typed for you');

    // Chapter 5: the bad build's canary is approved at 20% (Enter); its analysis is inconclusive.
    await pageWaitsFor('rel-1.30.0 · checkout: dev/shop/checkout-dev waits for approval');
    pressEnter();
    // Enter types the abort; its dialog opens over #checkout-releases although the page shows another channel.
    await pageWaitsFor('dev waits after an inconclusive analysis: abort the canary');
    expect(await page.locator('#main-header .main-title').innerText()).toBe('# checkout-appset-releases');
    pressEnter();
    const modal = page.locator('#modal');
    await modal.getByText('Abort the Rollout?').waitFor({ timeout: WAIT });
    expect(await page.locator('#main-header .main-title').innerText()).toBe('# checkout-releases');
    await pageWaitsFor('the Abort dialog asks to confirm');
    await page.screenshot({ path: join(ARTIFACTS, 'story-abort-dialog.png') });
    // Enter: the story presses Abort itself, and the page closes the dialog.
    pressEnter();
    await terminal(/→ rel-1\.30\.0 · the Abort dialog asks to confirm; you press Abort/, 'the dialog answered by the story');
    await modal.waitFor({ state: 'hidden', timeout: WAIT });
    await terminal(/✓ rel-1\.30\.0 · Aborted/, 'the release aborted');
    // Nothing blocks the page: the App Home opens.
    await page.locator('#home-link').click({ timeout: 5_000 });
    await page.locator('.home-view', { hasText: 'Active releases' }).waitFor({ timeout: WAIT });

    // The images Glidepath uploaded, drawn in their threads: the bad build's analysis chart (800×400,
    // as analysis-chart-image.ts draws it) and rel-1.29.0's timeline, after it completed.
    await page.locator(`[data-channel="${CHECKOUT}"]`).click();
    const chart = await sharedImage('Release rel-1.30.0 — checkout', /^success-rate Inconclusive — dev\/shop\/checkout-dev/);
    expect(chart).toMatchObject({ width: 800, height: 400 });
    expect(chart.alt).toMatch(/success-rate/);
    await page.screenshot({ path: join(ARTIFACTS, 'story-analysis-chart.png') });
    const timeline = await sharedImage('Release rel-1.29.0 — checkout', /^Release rel-1\.29\.0 · checkout$/);
    expect(timeline.alt).toMatch(/^Timeline of release rel-1\.29\.0 of checkout \(Complete\)/);

    // Only --auto acts for you: nothing was done by the sandbox, and the run logged no failed edit.
    expect(out).not.toMatch(/the sandbox (clicks|types|presses)|by @sandbox|@sandbox:/);
    expect(out).not.toMatch(/could not edit the clicked message|message_not_found/);
  }
});
