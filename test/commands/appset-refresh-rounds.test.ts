/**
 * Refresh until fresh (argo-cd#29347): Argo CD can take a refresh request and do nothing, so the
 * child moves on only at the periodic resync. `freshness --refresh` and Refresh-and-approve ask
 * again in bounded rounds with backoff, say how many rounds it took, and, when they give up, which
 * children are still stale and what to do. Against the Argo CD simulator dropping refreshes, over
 * real HTTP, with the periodic resync an hour away so only Glidepath's asking can make a child fresh.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REFRESH_APPROVE_ACTION_ID } from '../../src/slack/buttons.js';
import { annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from '../kube/argo-world.js';
import { CHANNEL, commandsConfig, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { eventually } from '../helpers/slack-harness.js';

let w: ArgoWorld;
let rig: CommandsRig;
afterEach(async () => {
  await rig.close();
  await w.stop();
});

/**
 * Every step gated (nothing syncs), a new commit seen so far only by dev: staging and prod last
 * reconciled before the latest transition, and Argo CD drops their next `drops` refresh requests.
 */
async function start(rounds: number, drops = 1): Promise<void> {
  w = await startArgoWorld({ maxUpdate: [0, 0, 0], reconcileEveryMs: 3_600_000 });
  const config = commandsConfig();
  // Long enough, in real time, for every child's dropped request to be seen before the next round.
  config.settings.freshnessRefresh = { rounds, backoffSeconds: 0.5, maxBackoffSeconds: 1 };
  rig = await startCommandsRig({ clusters: w.clusters, now: () => w.clock.now(), followTimeoutMs: 60_000, config });
  await w.clock.advance(5_000);
  w.git.commit(REPO, 'main', tree('1.29.0'));
  annotateRefresh(w, 'dev');
  await w.clock.advance(1000);
  w.standIn.argocd[0]!.dropNextRefreshes(drops, ['checkout-staging', 'checkout-prod']);
}

const patches = (): number => w.server.requestCounts.get('patch applications') ?? 0;

/**
 * The command answers Slack at once and acts after (permission, audit, then the refresh): the fake
 * clock waits for the refresh to start, so the rounds are counted from the same moment under load.
 */
const refreshStarted = (seen: () => unknown): Promise<unknown> => eventually(() => seen() || undefined, 'the refresh to start');
const progressPosted = () => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes('refreshing'));

/** Advances the fake clock until `probe` yields (the bot waits on watches over real HTTP meanwhile). */
async function advanceFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = probe();
    if (found !== undefined) return found;
    await w.clock.advance(500);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('freshness --refresh when Argo CD drops a refresh', () => {
  it('asks again and says how many rounds it took', async () => {
    await start(4);
    const before = patches();
    await rig.command('freshness prod/argocd/checkout --refresh');
    await refreshStarted(progressPosted);
    const message = await advanceFor(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(':white_check_mark:')), 'all fresh');
    // Round 1 is dropped; round 2 is honoured, and staging and prod, now comparing the new commit,
    // move the latest transition on past dev; round 3 asks dev.
    expect(message.text.split('\n')[0]).toBe(':white_check_mark: *prod/argocd/checkout*: 3/3 fresh after 3 refresh rounds');
    // Asked again (round 1 asks all three), and never more than three rounds of three. How many
    // were still stale at round 2 depends on how far the test's clock moved Argo CD meanwhile (the
    // rounds wait on real timers): 5 on a quiet machine, 6 seen under load.
    const asked = patches() - before;
    expect(asked).toBeGreaterThan(3);
    expect(asked).toBeLessThanOrEqual(9);
  });

  it('gives up after the configured rounds, before the timeout, naming the stale children and what to do', async () => {
    await start(2, 10);
    const before = patches();
    await rig.command('freshness prod/argocd/checkout --refresh --timeout 10m');
    await refreshStarted(progressPosted);
    const message = await advanceFor(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(':warning:')), 'giving up');
    const lines = message.text.split('\n');
    expect(lines[0]).toBe(':warning: *prod/argocd/checkout*: 1/3 fresh after 2 refresh rounds; still stale: 2');
    for (const env of ['staging', 'prod']) expect(message.text).toMatch(new RegExp(`\`checkout-${env}\` stale: reconciledAt \\d+ s before the latest transition`));
    expect(lines.at(-1)).toBe(
      'Argo CD took every refresh but has not reconciled them since the latest step transition (argo-cd#29347); its periodic resync (every 2-3 min) will. Run `/glidepath freshness prod/argocd/checkout --refresh` again then, or check the Argo CD application controller if they stay stale.',
    );
    // Bounded: 2 rounds of 2 children, and no more asking afterwards.
    expect(patches() - before).toBe(4);
  });
});

describe('Refresh and approve when Argo CD drops a refresh', () => {
  it('asks again until fresh, says how many rounds it took, then judges the step on fresh state', async () => {
    await start(4);
    const refusal = await (await rig.command('approve prod/argocd/checkout')).first();
    expect(said(refusal)).toMatch(/^:warning: Not approving step 3 of checkout: 2 of its Applications are not fresh \(checkout-prod: reconciledAt/);
    const button = (refusal.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!.elements![0]!;
    expect(button.action_id).toBe(REFRESH_APPROVE_ACTION_ID);

    const clicked = await rig.click({ actionId: REFRESH_APPROVE_ACTION_ID, value: button.value });
    await refreshStarted(() => clicked.responses().find((r) => said(r).startsWith(':arrows_counterclockwise: Refreshing')));
    const after = await advanceFor(() => clicked.responses().find((r) => said(r).startsWith('Fresh:') || said(r).includes('Not fresh')), 'the outcome of the refresh');
    expect(said(after).split('\n')[0]).toBe('Fresh: 3/3 fresh after 3 refresh rounds.');
    // On fresh state the step is judged: dev and staging have not synced the new commit (their steps are gated too).
    expect(said(after).split('\n')[1]).toMatch(/^:x: Not approving step 3 of checkout: earlier steps are not Healthy at [0-9a-f]{7} \(step 1: checkout-dev is OutOfSync/);
    expect(w.app('checkout-prod').operation).toBeUndefined();
  });
});
