/**
 * One thread per rollout of an ApplicationSet whose children carry no release id (issue #21 item
 * 1, src/releases/worker/appset-rollouts.ts), through the watch: the stand-in API server written as Argo
 * CD and the ApplicationSet controller write it (test/helpers/scripted-argocd.ts), a real Glidepath
 * with Redis, and the Slack stand-in, whose messages are asserted. A source per child (a branch
 * per environment, a multi-source prod), one change pushed to all of them at once: one thread,
 * not one per revision; a later change is a second thread; CI announcing the commit before the
 * children ran it names the thread.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { CI_TOKEN, postJson } from '../helpers/glidepath.js';
import { CHARTS, REPO, STEPS, VALUES, sha, startScriptedAppSet, type ScriptedArgoCd, type Source } from '../helpers/scripted-argocd.js';
import { waitFor } from '../helpers/wait.js';
import type { WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0ROLLOUT';
const PIPELINE = 'checkout-appset';
const short = (c: string) => sha(c).slice(0, 7);

let world: WatchedWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(): Promise<{ w: WatchedWorld; argo: ScriptedArgoCd }> {
  const started = await startScriptedAppSet({ channel: CHANNEL, pipeline: PIPELINE, env: { CI_TOKENS: `${PIPELINE}=${CI_TOKEN}` } });
  world = started.w;
  return started;
}

const git = (path: string, branch: string): Source => ({ repoURL: REPO, path, targetRevision: branch });
const prodSources = (chart: string): Source[] => [{ repoURL: CHARTS, chart: 'checkout', targetRevision: chart }, { repoURL: VALUES, path: 'prod', targetRevision: 'main' }];
const parents = (w: WatchedWorld) => w.slack.transcript.messages(CHANNEL);
const statusOf = (m: TranscriptMessage): string => /\): (\w+)\./.exec(m.text)?.[1] ?? '?';
const blocksOf = (m: TranscriptMessage): string => JSON.stringify(m.blocks);

/** Each child at its own revisions: dev on main, staging on its branch, prod a chart and its values. */
interface Change {
  dev: string;
  staging: string;
  chart: string;
  values: string;
}
const ownRevisions = (c: Change): Record<string, string[]> => ({ 'checkout-dev': [sha(c.dev)], 'checkout-staging': [sha(c.staging)], 'checkout-prod': [c.chart, sha(c.values)] });

async function settle(argo: ScriptedArgoCd, c: Change): Promise<void> {
  const own = ownRevisions(c);
  await argo.settle({
    'checkout-dev': { sources: [git('checkout/dev', 'main')], revisions: own['checkout-dev']! },
    'checkout-staging': { sources: [git('checkout/staging', 'release-4')], revisions: own['checkout-staging']! },
    'checkout-prod': { sources: prodSources(c.chart), revisions: own['checkout-prod']! },
  });
}

/** One change pushed to every child at once (no release id in the template), rolled through the three steps. */
async function rollOut(argo: ScriptedArgoCd, c: Change, chartBefore: string): Promise<void> {
  if (c.chart !== chartBefore) await argo.specChange('checkout-prod', { sources: prodSources(c.chart) });
  const own = ownRevisions(c);
  for (const n of STEPS.flat()) await argo.compare(n, own[n]!);
  await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: own[n] }])));
  for (const step of [1, 2, 3]) await argo.runStep(step, own);
}

/** The one parent whose rows show this change's revisions, once it is Complete. */
async function completeThreadOf(w: WatchedWorld, c: Change): Promise<TranscriptMessage> {
  const mine = (m: TranscriptMessage) => blocksOf(m).includes(`step 2 of 3 · 1/1 Healthy at \`${short(c.staging)}\``);
  return waitFor(async () => parents(w).find((m) => mine(m) && statusOf(m) === 'Complete'), `the thread of ${c.dev} Complete in Slack`);
}

const mentions = (w: WatchedWorld, c: Change): TranscriptMessage[] =>
  parents(w).filter((m) => [short(c.dev), short(c.staging), short(c.values), c.chart].some((r) => blocksOf(m).includes(`\`${r}\``) || m.text.includes(r)));

describe('one thread per rollout of an ApplicationSet whose children carry no release id, through the watch', () => {
  it('a source per child, prod multi-source, all changed at once: one thread that completes, each row at its own revisions; a second change later is a second thread', async () => {
    const { w, argo } = await start();
    const before: Change = { dev: 'c1', staging: 'd1', chart: '4.1.0', values: 'e1' };
    const first: Change = { dev: 'c2', staging: 'd2', chart: '4.2.0', values: 'e2' };
    const second: Change = { dev: 'c3', staging: 'd3', chart: '4.3.0', values: 'e3' };
    await settle(argo, before);
    await rollOut(argo, first, before.chart);
    const one = await completeThreadOf(w, first);
    expect(blocksOf(one)).toContain(`*dev* — Healthy · step 1 of 3 · 1/1 Healthy at \`${short('c2')}\``);
    expect(blocksOf(one)).toContain(`*prod* — Healthy · step 3 of 3 · 1/1 Healthy at \`4.2.0\`, \`${short('e2')}\``);
    // Not a thread per revision: the change is in one parent only.
    expect(mentions(w, first)).toEqual([one]);
    expect(one.replies.filter((r) => r.text.includes('started before'))).toEqual([]);

    await rollOut(argo, second, first.chart);
    const two = await completeThreadOf(w, second);
    expect(two.ts).not.toBe(one.ts);
    expect(blocksOf(two)).toContain(`*staging* — Healthy · step 2 of 3 · 1/1 Healthy at \`${short('d3')}\``);
    expect(mentions(w, second)).toEqual([two]);
    // The first thread stays the first change's.
    expect(statusOf(parents(w).find((m) => m.ts === one.ts)!)).toBe('Complete');
  }, 180_000);

  it('CI announces the commit before the children run it: the rollout they open is CI\'s release, and its thread carries CI\'s id', async () => {
    const { w, argo } = await start();
    const before: Change = { dev: 'a1', staging: 'b1', chart: '4.1.0', values: 'f1' };
    const next: Change = { dev: 'a2', staging: 'b2', chart: '4.2.0', values: 'f2' };
    await settle(argo, before);
    const announced = { releaseId: 'rel-ci-77', pipeline: PIPELINE, images: ['registry.example.com/shop/checkout:4.2.0'], commit: sha('a2'), author: 'alice' };
    expect((await postJson(`${w.app.url}/v1/releases`, announced, CI_TOKEN)).status).toBe(202);
    await waitFor(async () => (await w.app.store.get(PIPELINE, 'rel-ci-77')) ?? undefined, 'the announced release');
    await rollOut(argo, next, before.chart);
    const thread = await completeThreadOf(w, next);
    expect(thread.text).toMatch(/^Release rel-ci-77 /);
    expect(mentions(w, next)).toEqual([thread]);
    const record = await w.app.store.get(PIPELINE, 'rel-ci-77');
    expect(record?.status).toBe('Complete');
  }, 180_000);
  it('CI announces after the children ran it, naming prod\'s values commit (not the revision that opened the rollout): the rollout\'s one thread is named by CI\'s id', async () => {
    const { w, argo } = await start();
    const before: Change = { dev: 'a3', staging: 'b3', chart: '4.1.0', values: 'f3' };
    const next: Change = { dev: 'a4', staging: 'b4', chart: '4.2.0', values: 'f4' };
    await settle(argo, before);
    await rollOut(argo, next, before.chart);
    const thread = await completeThreadOf(w, next);
    const announced = { releaseId: 'rel-ci-78', pipeline: PIPELINE, images: ['registry.example.com/shop/checkout:4.2.0'], commit: sha('f4'), author: 'alice' };
    expect((await postJson(`${w.app.url}/v1/releases`, announced, CI_TOKEN)).status).toBe(202);
    const named = await waitFor(async () => parents(w).find((m) => m.ts === thread.ts && m.text.startsWith('Release rel-ci-78 ')), 'the thread renamed by CI\'s id');
    expect(statusOf(named)).toBe('Complete');
    // CI's id joined the rollout: no thread of its own.
    expect(parents(w).filter((m) => m.text.includes('rel-ci-78'))).toEqual([named]);
  }, 180_000);
});
