/**
 * The sandbox's story waits for you: without --auto a decision is held however long nobody acts
 * (the page shows what it waits for), Enter in the terminal decides it for you, and only --auto
 * lets the sandbox decide, as itself. Story time is the test's: `sleep` only counts it.
 */
import { describe, expect, it } from 'vitest';
import { Decisions, type Decision } from '../../sandbox/story/decisions.js';
import type { Person } from '../../sandbox/story/people.js';
import { parseSandboxOptions } from '../../sandbox/story/options.js';

const WAIT_FOR_YOU_MS = 20_000;

function rig(auto: boolean) {
  const said: string[] = [];
  let shown: string[] = [];
  let storyMs = 0;
  let onSleep: (ms: number) => void = () => undefined;
  const decisions = new Decisions({
    auto,
    waitForYouMs: WAIT_FOR_YOU_MS,
    sleep: async (ms) => {
      storyMs += ms;
      onSleep(ms);
      await Promise.resolve();
    },
    say: (line) => said.push(line),
    show: (lines) => (shown = lines),
  });
  const acted: Person[] = [];
  let decidedElsewhere = false;
  const decision: Decision = {
    releaseId: 'rel-1.29.0',
    what: 'checkout: dev/shop/checkout-dev waits for approval',
    inPage: 'click Approve on its reply in #checkout-releases',
    byEnter: 'approve it from here',
    decided: () => decidedElsewhere,
    act: async (by) => void acted.push(by),
  };
  return {
    decisions,
    decision,
    said,
    acted,
    shown: () => shown,
    storyMs: () => storyMs,
    decideInPage: () => (decidedElsewhere = true),
    onSleep: (f: (ms: number) => void) => (onSleep = f),
  };
}

describe('the story waits for you', () => {
  it('without --auto holds far past the --auto delay, says so in the terminal and the page, and Enter decides it for you', async () => {
    const r = rig(false);
    // Ten times the --auto delay with nobody acting: then Enter.
    r.onSleep(() => {
      if (r.storyMs() >= 10 * WAIT_FOR_YOU_MS && r.decisions.waiting) r.decisions.pressEnter();
    });
    const waiting = r.decisions.wait(r.decision);
    expect(r.shown()).toEqual(['rel-1.29.0 · checkout: dev/shop/checkout-dev waits for approval: click Approve on its reply in #checkout-releases, or press Enter in the terminal']);
    expect(r.said[0]).toBe(
      '… rel-1.29.0 · checkout: dev/shop/checkout-dev waits for approval: the story waits for you. Click Approve on its reply in #checkout-releases in the page, or press Enter here to approve it from here',
    );
    expect(await waiting).toBe('you');
    expect(r.acted).toEqual(['you']);
    expect(r.storyMs()).toBeGreaterThanOrEqual(10 * WAIT_FOR_YOU_MS);
    expect(r.shown()).toEqual([]);
    expect(r.decisions.waiting).toBe(false);
  });

  it('goes on without acting when the decision was made in the page', async () => {
    const r = rig(false);
    r.onSleep(() => r.decideInPage());
    expect(await r.decisions.wait(r.decision)).toBe('page');
    expect(r.acted).toEqual([]);
    expect(r.said.at(-1)).toBe('✓ rel-1.29.0 · checkout: dev/shop/checkout-dev waits for approval: decided in the page; the story goes on');
  });

  it('with --auto the sandbox decides, as itself, once the delay is over', async () => {
    const r = rig(true);
    expect(await r.decisions.wait(r.decision)).toBe('sandbox');
    expect(r.acted).toEqual(['sandbox']);
    expect(r.storyMs()).toBe(WAIT_FOR_YOU_MS);
    expect(r.said[0]).toContain('(--auto: the sandbox does it for you in 20 story seconds)');
  });

  it('Enter with nothing to decide says so and decides nothing later', async () => {
    const r = rig(false);
    r.decisions.pressEnter();
    expect(r.said).toEqual(['  (nothing waits for you now: Enter acts when the story asks you for something)']);
    r.onSleep(() => {
      if (r.storyMs() >= 3 * WAIT_FOR_YOU_MS) r.decideInPage();
    });
    expect(await r.decisions.wait(r.decision)).toBe('page');
    expect(r.acted).toEqual([]);
  });

  it('Enter decides the oldest open decision first', async () => {
    const r = rig(false);
    const order: string[] = [];
    const first = r.decisions.wait({ ...r.decision, what: 'dev waits', act: async () => void order.push('dev') });
    const second = r.decisions.wait({ ...r.decision, what: 'staging waits', act: async () => void order.push('staging') });
    expect(r.shown()).toHaveLength(2);
    r.decisions.pressEnter();
    await first;
    expect(order).toEqual(['dev']);
    expect(r.shown()).toHaveLength(1);
    r.decisions.pressEnter();
    await second;
    expect(order).toEqual(['dev', 'staging']);
  });
});

describe('sandbox options: --auto', () => {
  it('is off by default, on with --auto or SANDBOX_AUTO=1, and on for a run that stops by itself (--seconds)', () => {
    expect(parseSandboxOptions([], {}).auto).toBe(false);
    expect(parseSandboxOptions(['--auto'], {}).auto).toBe(true);
    expect(parseSandboxOptions(['--speed', '5', '--auto'], {}).auto).toBe(true);
    expect(parseSandboxOptions([], { SANDBOX_AUTO: '1' }).auto).toBe(true);
    expect(parseSandboxOptions(['--seconds', '60'], {}).auto).toBe(true);
    expect(parseSandboxOptions([], { SANDBOX_SECONDS: '60' }).auto).toBe(true);
  });

  it('refuses a bad SANDBOX_AUTO and names --auto for an unknown option', () => {
    expect(parseSandboxOptions(['--auto'], {}).autoAfterSeconds).toBe(20);
    expect(parseSandboxOptions(['--auto'], { SANDBOX_AUTO_AFTER: '2' }).autoAfterSeconds).toBe(2);
    expect(() => parseSandboxOptions([], { SANDBOX_AUTO_AFTER: '-1' })).toThrow('SANDBOX_AUTO_AFTER must be 0 or more story seconds');
    expect(() => parseSandboxOptions([], { SANDBOX_AUTO: 'yes' })).toThrow('SANDBOX_AUTO must be 1 or 0 (1: the sandbox acts for you, as --auto)');
    expect(() => parseSandboxOptions(['--automatic'], {})).toThrow(/unknown option --automatic: the sandbox takes --speed N, --seconds N and --auto/);
  });
});
