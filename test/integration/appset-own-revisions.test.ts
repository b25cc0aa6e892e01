/**
 * ApplicationSet steps as Argo CD really runs them (issue #21), through the watch: a stand-in API
 * server whose Applications and ApplicationSet are written as Argo CD and the ApplicationSet
 * controller write them (test/helpers/scripted-argocd.ts), a real Glidepath with Redis, and the
 * Slack stand-in, whose messages are asserted. The epic's three cases (argo-cd#22558: one
 * targetRevision for all; a template change taking apps OutOfSync; a source per child, one of
 * them multi-source, all changed at once), a health that lags the sync, a status compared against
 * the previous spec (#29410), and a child still Degraded from the previous revision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageVersion, TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { CHARTS, REPO, ROWS, STEPS, VALUES, sha, startScriptedAppSet, type ScriptedArgoCd, type Source } from '../helpers/scripted-argocd.js';
import { waitFor } from '../helpers/wait.js';
import type { WatchedWorld } from '../helpers/watched-world.js';
import { releaseIdName } from '../../src/releases/record/display-name.js';
import type { TargetState } from '../../src/releases/record/record.js';

const CHANNEL = 'C0OWNREV';
const PIPELINE = 'checkout-appset';

let world: WatchedWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(): Promise<{ w: WatchedWorld; argo: ScriptedArgoCd }> {
  const started = await startScriptedAppSet({ channel: CHANNEL, pipeline: PIPELINE });
  world = started.w;
  return started;
}

const git = (path: string, targetRevision = 'main'): Source => ({ repoURL: REPO, path, targetRevision });
const parents = (w: WatchedWorld) => w.slack.transcript.messages(CHANNEL);
// A thread is named as people know it: a `revision-<sha>` release by its short commit (display-name.ts).
const thread = (w: WatchedWorld, releaseId: string): TranscriptMessage | undefined => parents(w).find((m) => m.text.startsWith(`Release ${releaseIdName(releaseId)} `));
const versions = (m: TranscriptMessage): MessageVersion[] => [...m.edits, { text: m.text, blocks: m.blocks, at: m.at }];
const statusOf = (v: MessageVersion): string => /\): (\w+)\./.exec(v.text)?.[1] ?? '?';
const rowsOf = (v: MessageVersion): Record<string, string> => Object.fromEntries((/\): \w+\. (.*)$/.exec(v.text)?.[1] ?? '').split(', ').map((r) => r.split(' ') as [string, string]));
const shownText = (m: TranscriptMessage): string => (m.blocks[0] as { text?: { text?: string } } | undefined)?.text?.text ?? m.text;

/**
 * The script writes without waiting for Glidepath, so a whole rollout's watch events may still be
 * queued when it ends: beside the rest of the suite the thread catches up in tens of seconds. The
 * limit only ends a hung test.
 */
const CATCH_UP_MS = 60_000;

/** The record's own word on each stage and its targets, for a failure message: a lagging writer or a wrong record. */
async function recordWord(w: WatchedWorld, releaseId: string): Promise<string> {
  const record = await w.app.store.get(PIPELINE, releaseId);
  if (!record) return '(none)';
  const target = (t: TargetState) => `${t.ref.name}@${t.revision ?? '?'} ${t.syncStatus ?? '?'} ${t.phase ?? '?'}${t.supersededBy !== undefined ? ` superseded by ${t.supersededBy}` : ''}${t.healthyAt !== undefined ? ' (healthy once)' : ''}`;
  const stages = record.stages.map((s) => `${s.name}=${s.status}${s.healthyAt !== undefined ? ' (healthy once)' : ''} ${JSON.stringify(s.stepProgress ?? {})}: ${Object.values(s.targets).map(target).join('; ')}`);
  return `${record.status}\n    ${stages.join('\n    ')}`;
}

async function parentWhere(w: WatchedWorld, releaseId: string, what: string, ok: (m: TranscriptMessage) => boolean): Promise<TranscriptMessage> {
  try {
    return await waitFor(async () => {
      const m = thread(w, releaseId);
      return m && ok(m) ? m : undefined;
    }, what, CATCH_UP_MS);
  } catch (err) {
    // What Slack and the record showed instead: the difference between a lagging writer and a wrong record.
    throw new Error(`${(err as Error).message}\n  the parent: ${thread(w, releaseId)?.text ?? '(none)'}\n  the record: ${await recordWord(w, releaseId)}`, { cause: err });
  }
}
async function replyWhere(w: WatchedWorld, releaseId: string, what: string, ok: (m: TranscriptMessage) => boolean): Promise<TranscriptMessage> {
  try {
    return await waitFor(async () => thread(w, releaseId)?.replies.find(ok), what, CATCH_UP_MS);
  } catch (err) {
    // The replies Slack holds and the record's own word on each stage: whether the reply was never decided or never posted.
    const named = parents(w).filter((m) => m.text.startsWith(`Release ${releaseIdName(releaseId)} `));
    const replies = named.flatMap((m, i) => m.replies.map((r) => `[thread ${i + 1} of ${named.length}] ${r.text.slice(0, 160)}`)).join('\n    ') || `(${named.length} threads, no reply)`;
    throw new Error(`${(err as Error).message}\n  the replies:\n    ${replies}\n  the record: ${await recordWord(w, releaseId)}`, { cause: err });
  }
}
/** The thread once Glidepath has nothing left to say: what a reply count is taken from. */
async function settledThread(w: WatchedWorld, releaseId: string): Promise<TranscriptMessage> {
  await w.settled();
  return thread(w, releaseId)!;
}
const complete = (w: WatchedWorld, releaseId: string) => parentWhere(w, releaseId, `${releaseId} Complete in Slack`, (m) => statusOf(m) === 'Complete');

describe('ApplicationSet children judged at their own revisions, through the watch', () => {
  it('one targetRevision for all: rows go Healthy in step order at the revision, a step not reached yet reads Waiting, Complete at the end', async () => {
    const { w, argo } = await start();
    const [s1, s2] = [sha('a1'), sha('a2')];
    await argo.settle(Object.fromEntries(STEPS.flat().map((n, i) => [n, { sources: [git(`checkout/${ROWS[i]}`)], revisions: [s1] }])));
    for (const n of STEPS.flat()) await argo.compare(n, [s2]);
    await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: [s2] }])));
    const releaseId = `revision-${s2.slice(0, 12)}`;
    const own = Object.fromEntries(STEPS.flat().map((n) => [n, [s2]]));
    await argo.runStep(1, own);
    // Step 1 done and all of it heard: the steps not reached yet read Waiting, not Progressing.
    await parentWhere(w, releaseId, 'dev Healthy', (m) => rowsOf(m).dev === 'Healthy');
    await w.settled();
    // On a mismatch, the record's own word beside the parent (a flake seen once under heavy load: staging Healthy here).
    expect(rowsOf(thread(w, releaseId)!), `the record: ${await recordWord(w, releaseId)}`).toEqual({ dev: 'Healthy', staging: 'Waiting', prod: 'Waiting' });
    for (const step of [2, 3]) await argo.runStep(step, own);
    const parent = await complete(w, releaseId);
    const seen = versions(parent);
    // In step order: prod never Healthy before staging. (Prod may read Progressing a moment before staging
    // reads Healthy: the ApplicationSet's stream can run ahead of staging's own Healthy.)
    expect(seen.some((v) => rowsOf(v).prod === 'Healthy' && rowsOf(v).staging !== 'Healthy')).toBe(false);
    for (const [i, r] of ROWS.entries()) expect(JSON.stringify(parent.blocks)).toContain(`*${r}* — Healthy · step ${i + 1} of 3 · 1/1 Healthy at \`${s2.slice(0, 7)}\``);
    expect((await settledThread(w, releaseId)).replies.filter((r) => r.text.includes('started before'))).toEqual([]);
  }, 120_000);

  // Events keep their order within a stream; the streams drift apart (an API server under load).
  const lags: [string, () => (kind: string) => number | undefined][] = [
    // Heard as created (no entry yet), then its status a second and a half late: every child is heard before the ApplicationSet lists it.
    ['the ApplicationSet heard as created, its status on a stream lagging the Applications\' by 1.5 s', () => {
      let heard = 0;
      return (kind) => (kind === 'ApplicationSet' && heard++ > 0 ? 1_500 : undefined);
    }],
    ['the Applications\' stream lagging the ApplicationSet\'s by 1.5 s', () => (kind) => (kind === 'Application' ? 1_500 : undefined)],
  ];
  for (const [lagging, lagOf] of lags) {
    it(`${lagging}: nothing heard is lost, each row Healthy at the revision, Complete`, async () => {
      const { w, argo } = await start();
      const lag = lagOf();
      w.cluster.server.watches.lagMs = (rt) => lag(rt.kind);
      const [s1, s2] = [sha('c1'), sha('c2')];
      await argo.settle(Object.fromEntries(STEPS.flat().map((n, i) => [n, { sources: [git(`checkout/${ROWS[i]}`)], revisions: [s1] }])));
      for (const n of STEPS.flat()) await argo.compare(n, [s2]);
      await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: [s2] }])));
      const own = Object.fromEntries(STEPS.flat().map((n) => [n, [s2]]));
      for (const step of [1, 2, 3]) await argo.runStep(step, own);
      const parent = await complete(w, `revision-${s2.slice(0, 12)}`);
      for (const [i, r] of ROWS.entries()) expect(JSON.stringify(parent.blocks)).toContain(`*${r}* — Healthy · step ${i + 1} of 3 · 1/1 Healthy at \`${s2.slice(0, 7)}\``);
    }, 120_000);
  }

  it('a template change that takes two apps OutOfSync: never Complete on the statuses of the previous spec, Complete once both synced the new one', async () => {
    const { w, argo } = await start();
    const s1 = sha('b1');
    await argo.settle(Object.fromEntries(STEPS.flat().map((n, i) => [n, { sources: [git(`checkout/${ROWS[i]}`)], revisions: [s1], releaseId: 'rel-100' }])));
    // The template changes the path of staging and prod (CI's release id in it); dev's spec is the same.
    await argo.specChange('checkout-dev', { sources: [git('checkout/dev')], releaseId: 'rel-101' });
    await argo.specChange('checkout-staging', { sources: [git('checkout/v2/staging')], releaseId: 'rel-101' });
    await argo.specChange('checkout-prod', { sources: [git('checkout/v2/prod')], releaseId: 'rel-101' });
    const waiting = await parentWhere(w, 'rel-101', 'rows waiting for a comparison', (m) => JSON.stringify(m.blocks).includes('waiting for Argo CD to compare the new revision'));
    expect(statusOf(waiting)).not.toBe('Complete');
    await argo.compare('checkout-staging', [s1]);
    await argo.compare('checkout-prod', [s1]);
    await argo.entry({ 'checkout-staging': { status: 'Waiting' }, 'checkout-prod': { status: 'Waiting' } });
    await argo.runStep(2, {});
    // Staging synced the new spec; prod has not (OutOfSync at it, Healthy on the previous one):
    // with all of that heard, the release is not Complete.
    const stagingDone = await parentWhere(w, 'rel-101', 'staging Healthy at the new spec', (m) => rowsOf(m).staging === 'Healthy');
    await w.settled();
    expect(statusOf(thread(w, 'rel-101') ?? stagingDone)).not.toBe('Complete');
    await argo.runStep(3, {});
    const parent = await complete(w, 'rel-101');
    const seen = versions(parent);
    const firstComplete = seen.findIndex((v) => statusOf(v) === 'Complete');
    expect(seen.slice(firstComplete).every((v) => Object.values(rowsOf(v)).every((s) => s === 'Healthy'))).toBe(true);
    // Complete only after prod synced the new spec: every version before it with prod Healthy is after staging's.
    expect(seen.slice(0, firstComplete).some((v) => rowsOf(v).prod !== 'Healthy')).toBe(true);
    expect((await settledThread(w, 'rel-101')).replies.filter((r) => r.text.includes('started before'))).toEqual([]);
  }, 120_000);

  it('a source per child, prod multi-source, all changed at once: one thread, each row at its child\'s own revisions, Complete, no out-of-order reply', async () => {
    const { w, argo } = await start();
    const prodSources = (chart: string): Source[] => [{ repoURL: CHARTS, chart: 'checkout', targetRevision: chart }, { repoURL: VALUES, path: 'prod', targetRevision: 'main' }];
    await argo.settle({
      'checkout-dev': { sources: [git('checkout/dev')], revisions: [sha('c1')], releaseId: 'rel-41' },
      'checkout-staging': { sources: [git('checkout/staging', 'release-4')], revisions: [sha('d1')], releaseId: 'rel-41' },
      'checkout-prod': { sources: prodSources('4.1.0'), revisions: ['4.1.0', sha('e1')], releaseId: 'rel-41' },
    });
    // One change pushed everywhere at once: a commit on main, one on release-4, prod's chart and values.
    await argo.specChange('checkout-dev', { sources: [git('checkout/dev')], releaseId: 'rel-42' });
    await argo.specChange('checkout-staging', { sources: [git('checkout/staging', 'release-4')], releaseId: 'rel-42' });
    await argo.specChange('checkout-prod', { sources: prodSources('4.2.0'), releaseId: 'rel-42' });
    const own: Record<string, string[]> = { 'checkout-dev': [sha('c2')], 'checkout-staging': [sha('d2')], 'checkout-prod': ['4.2.0', sha('e2')] };
    for (const n of STEPS.flat()) await argo.compare(n, own[n]!);
    await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: own[n] }])));
    for (const step of [1, 2, 3]) await argo.runStep(step, own);
    const parent = await complete(w, 'rel-42');
    const blocks = JSON.stringify(parent.blocks);
    expect(blocks).toContain(`*dev* — Healthy · step 1 of 3 · 1/1 Healthy at \`${sha('c2').slice(0, 7)}\``);
    expect(blocks).toContain(`*staging* — Healthy · step 2 of 3 · 1/1 Healthy at \`${sha('d2').slice(0, 7)}\``);
    expect(blocks).toContain(`*prod* — Healthy · step 3 of 3 · 1/1 Healthy at \`4.2.0\`, \`${sha('e2').slice(0, 7)}\``);
    expect(versions(parent).some((v) => statusOf(v) === 'Failed')).toBe(false);
    expect((await settledThread(w, 'rel-42')).replies.filter((r) => r.text.includes('started before'))).toEqual([]);
    expect(parents(w).filter((m) => m.text.includes('rel-42'))).toHaveLength(1);
  }, 120_000);

  it('health that lags the sync: the ApplicationSet calls dev Healthy while its Application is Synced and Progressing, step 2 starts, dev goes Degraded: one out-of-order reply naming both', async () => {
    const { w, argo } = await start();
    const [s1, s2] = [sha('f1'), sha('f2')];
    await argo.settle(Object.fromEntries(STEPS.flat().map((n, i) => [n, { sources: [git(`checkout/${ROWS[i]}`)], revisions: [s1] }])));
    for (const n of STEPS.flat()) await argo.compare(n, [s2]);
    await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: [s2] }])));
    await argo.entry({ 'checkout-dev': { status: 'Pending' } });
    await argo.sync('checkout-dev');
    // The controller's word: Healthy, on a health that has not caught up with the sync.
    await argo.entry({ 'checkout-dev': { status: 'Healthy' } });
    await argo.entry({ 'checkout-staging': { status: 'Pending' } });
    await argo.sync('checkout-staging');
    await argo.health('checkout-dev', 'Degraded');
    const releaseId = `revision-${s2.slice(0, 12)}`;
    const reply = await replyWhere(w, releaseId, 'the out-of-order reply', (r) => r.text.includes('started before step 1'));
    const text = shownText(reply);
    expect(text).toContain(`RollingSync step 2 of \`prod/argocd/checkout\` started before step 1 was Healthy at \`${s2.slice(0, 7)}\``);
    // The ApplicationSet's word as last heard (Healthy, unless its stream runs behind), beside the Application's own.
    expect(text).toMatch(new RegExp(`• \`checkout-dev\` \\(step 1\\): \\w+ targeting \`${s2.slice(0, 7)}\`; the Application is Synced/Degraded at ${s2.slice(0, 7)}`));
    // Staging as last heard when the reply was decided: Pending and Synced, or a step behind on either stream.
    expect(text).toMatch(new RegExp(`• \`checkout-staging\` \\(step 2\\): \\w+ targeting \`${s2.slice(0, 7)}\`; the Application is \\w+/\\w+ at ${s2.slice(0, 7)}`));
    await parentWhere(w, releaseId, 'the parent says Failed', (m) => statusOf(m) === 'Failed');
    await argo.health('checkout-staging', 'Healthy');
    await argo.health('checkout-dev', 'Progressing');
    await argo.health('checkout-dev', 'Degraded');
    // Glidepath heard all of it (staging Healthy, dev Degraded again), and Slack shows that record.
    const heard = await waitFor(async () => {
      const r = await w.app.store.get(PIPELINE, releaseId);
      const target = (row: string, app: string) => r?.stages.find((s) => s.name === row)?.targets[`prod/argocd/app:${app}`];
      return target('staging', 'checkout-staging')?.phase === 'Healthy' && target('dev', 'checkout-dev')?.phase === 'Degraded' ? r : undefined;
    }, 'Glidepath heard staging Healthy and dev Degraded again', CATCH_UP_MS);
    await parentWhere(w, releaseId, 'Slack shows that record', (m) => statusOf(m) === heard.status && rowsOf(m).staging === heard.stages[1]?.status);
    // Once, counted when nothing is left to say: a second reply would be in the writer's queue now.
    await w.settled();
    expect(thread(w, releaseId)!.replies.filter((r) => r.text.includes('started before'))).toHaveLength(1);
  }, 120_000);

  it('a status compared against the previous spec counts for nothing: the rows wait for Argo CD to compare, and Complete comes only after the new chart synced', async () => {
    const { w, argo } = await start();
    const chart = (v: string): Source[] => [{ repoURL: CHARTS, chart: 'checkout', targetRevision: v }];
    await argo.settle(Object.fromEntries(STEPS.flat().map((n) => [n, { sources: chart('4.1.0'), revisions: ['4.1.0'], releaseId: 'rel-7' }])));
    for (const n of STEPS.flat()) await argo.specChange(n, { sources: chart('4.2.0'), releaseId: 'rel-8' });
    // Every Application still says Synced and Healthy (at 4.1.0, compared before the change), and so does the ApplicationSet.
    const waiting = await parentWhere(w, 'rel-8', 'each row waiting for a comparison', (m) => {
      const b = JSON.stringify(m.blocks);
      return STEPS.flat().every((n) => b.includes(`waiting for Argo CD to compare the new revision: \`${n}\``));
    });
    expect(statusOf(waiting)).toBe('InProgress');
    for (const n of STEPS.flat()) await argo.compare(n, ['4.2.0']);
    await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: ['4.2.0'] }])));
    for (const step of [1, 2, 3]) await argo.runStep(step, {});
    const parent = await complete(w, 'rel-8');
    const seen = versions(parent);
    const firstComplete = seen.findIndex((v) => statusOf(v) === 'Complete');
    const lastWaiting = seen.map((v) => JSON.stringify(v.blocks).includes('waiting for Argo CD to compare')).lastIndexOf(true);
    expect(lastWaiting).toBeGreaterThanOrEqual(0);
    expect(firstComplete).toBeGreaterThan(lastWaiting);
    expect(JSON.stringify(parent.blocks)).toContain('step 3 of 3 · 1/1 Healthy at `4.2.0`');
  }, 120_000);

  it('a child Degraded at the previous revision is no failure of this release until its step reaches it; Degraded there is said once, however it flaps', async () => {
    const { w, argo } = await start();
    const [s1, s2] = [sha('0a'), sha('0b')];
    await argo.settle({
      'checkout-dev': { sources: [git('checkout/dev')], revisions: [s1] },
      'checkout-staging': { sources: [git('checkout/staging')], revisions: [s1] },
      'checkout-prod': { sources: [git('checkout/prod')], revisions: [s1], health: 'Degraded' },
    });
    for (const n of STEPS.flat()) await argo.compare(n, [s2]);
    await argo.entry(Object.fromEntries(STEPS.flat().map((n) => [n, { status: 'Waiting' as const, targetRevisions: [s2] }])));
    await argo.runStep(1, {});
    await argo.runStep(2, {});
    const releaseId = `revision-${s2.slice(0, 12)}`;
    const before = await parentWhere(w, releaseId, 'staging Healthy, prod not reached', (m) => rowsOf(m).staging === 'Healthy');
    expect(rowsOf(before).prod).toBe('Waiting');
    expect(versions(before).some((v) => statusOf(v) === 'Failed')).toBe(false);
    expect(before.replies.filter((r) => r.text.includes('is Degraded'))).toEqual([]);
    // Step 3 reaches prod: the new revision is Degraded too, flaps, and is repaired.
    await argo.entry({ 'checkout-prod': { status: 'Pending' } });
    await argo.sync('checkout-prod');
    await argo.entry({ 'checkout-prod': { status: 'Progressing' } });
    await argo.health('checkout-prod', 'Degraded');
    await argo.health('checkout-prod', 'Progressing');
    await argo.health('checkout-prod', 'Degraded');
    await parentWhere(w, releaseId, 'prod Degraded in Slack', (m) => rowsOf(m).prod === 'Degraded');
    await argo.health('checkout-prod', 'Healthy');
    await argo.entry({ 'checkout-prod': { status: 'Healthy' } });
    const parent = await complete(w, releaseId);
    // The reply is its own Slack job: wait for it, not only for the parent that reads Complete.
    await waitFor(async () => (thread(w, releaseId)?.replies ?? parent.replies).some((r) => r.text.includes('is Degraded')), 'the Degraded reply', CATCH_UP_MS);
    // Once, counted when nothing is left to say: a second reply would be in the writer's queue now.
    await w.settled();
    const replies = thread(w, releaseId)!.replies;
    expect(replies.filter((r) => r.text.includes('is Degraded'))).toHaveLength(1);
  }, 120_000);
});
