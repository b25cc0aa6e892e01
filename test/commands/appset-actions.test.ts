/**
 * /glidepath freshness and approve on a RollingSync ApplicationSet, and the Refresh-and-approve
 * button, against the Argo CD / ApplicationSet / Rollouts simulators (with the stale-cache fault).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeRefreshApprove, REFRESH_APPROVE_ACTION_ID } from '../../src/slack/buttons.js';
import { annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from '../kube/argo-world.js';
import { eventually } from '../helpers/slack-harness.js';
import { ALICE, CHANNEL, commandsConfig, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { configFileSchema } from '../../src/config/file.js';

let w: ArgoWorld;
let rig: CommandsRig;
afterEach(async () => {
  await rig.close();
  await w.stop();
});

async function start(staleCache: boolean, config = commandsConfig()): Promise<void> {
  w = await startArgoWorld({ staleCache, maxUpdate: [undefined, undefined, 0] });
  rig = await startCommandsRig({ clusters: w.clusters, now: () => w.clock.now(), followTimeoutMs: 60_000, config });
  await w.clock.advance(150_000);
}

/** A new commit, seen so far only by dev (refreshed by hand): staging and prod are behind the latest transition. */
async function newCommit(): Promise<string> {
  const sha = w.git.commit(REPO, 'main', tree('1.29.0'));
  annotateRefresh(w, 'dev');
  await w.clock.advance(1000);
  return sha;
}

/** Advances the fake clock until `probe` yields (the bot waits on watches over real HTTP meanwhile). */
async function advanceFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  let found: T | undefined;
  const tick = async (): Promise<T | undefined> => {
    found = (await probe()) ?? undefined;
    return found;
  };
  for (let i = 0; i < 200 && (await tick()) === undefined; i++) {
    await w.clock.advance(500);
    await new Promise((r) => setTimeout(r, 20));
  }
  if (found === undefined) throw new Error(`gave up waiting for ${what}`);
  return found;
}

describe('freshness', () => {
  it('lists each child fresh or stale with why, counts first; --refresh updates one message until all are fresh', async () => {
    await start(false);
    await newCommit();
    const answer = await (await rig.command('freshness prod/argocd/checkout')).first();
    expect(answer.body).toMatchObject({ response_type: 'in_channel' });
    expect(said(answer).split('\n')[0]).toBe('*prod/argocd/checkout*: 1/3 fresh, 2 stale');
    expect(said(answer)).toMatch(/`checkout-prod` stale: reconciledAt \d+ s before the latest transition/);
    expect(said(answer)).toContain(':white_check_mark: `checkout-dev` fresh');

    await rig.command('freshness checkout@rolling --refresh --timeout 1m');
    const message = await advanceFor(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes('*prod/argocd/checkout*: 3/3 fresh')), 'all fresh');
    // The steps roll on while it waits, so how many rounds it takes varies (appset-refresh-rounds.test.ts pins it).
    expect(message.text.split('\n')[0]).toMatch(/^:white_check_mark: \*prod\/argocd\/checkout\*: 3\/3 fresh after \d refresh rounds?$/);
    expect(message.edits[0]!.text).toContain('refreshing 2 stale Applications… 1/3 fresh');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    expect(w.app('checkout-prod').metadata.annotations?.['argocd.argoproj.io/refresh']).toBeUndefined();
    expect((await rig.auditEntries()).map((e) => [e.action, e.actor.slackUserId, e.result, e.pipeline, e.stage])).toEqual([
      ['refresh', ALICE, 'done', 'checkout', 'rolling'],
    ]);
  });

  it('--refresh by someone who may not refresh is refused with the setting to change, before any Application is patched, and audited', async () => {
    await start(false);
    await newCommit();
    const denied = await (await rig.command('freshness prod/argocd/checkout --refresh --timeout 1m', MALLORY)).first();
    expect(said(denied)).toBe(
      ':no_entry: Not allowed: you may not refresh in checkout@rolling: pipelines[0].stages[4].permissions.approve allows U0ALICE, S0OPS (pipelines[0].stages[4].permissions.refresh is not set, so whoever may approve may refresh); ask one of them, or an admin to add you',
    );
    // The refusal is the person's alone: no progress message in the channel.
    expect(denied.body.response_type).not.toBe('in_channel');
    expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(0);
    expect(w.server.requestCounts.get('patch applications')).toBeUndefined();
    expect(w.app('checkout-prod').metadata.annotations?.['argocd.argoproj.io/refresh']).toBeUndefined();
    expect(await rig.auditEntries()).toMatchObject([{ action: 'refresh', actor: { slackUserId: MALLORY }, target: 'prod/argocd/checkout', result: 'denied', pipeline: 'checkout', stage: 'rolling' }]);
  });

  it('authorization: kubernetes: --refresh patches the Applications as the person; one whose RBAC lacks patch applications is refused before any is patched', async () => {
    const base = commandsConfig();
    const config = configFileSchema.parse({
      ...base,
      clusters: base.clusters.map((c) => (c.name === 'prod' ? { ...c, authorization: 'kubernetes' } : c)),
      identities: { users: { [ALICE]: { user: 'alice@example.com', groups: ['argocd-refreshers'] }, [MALLORY]: { user: 'mallory@example.com' } } },
    });
    await start(false, config);
    w.server.authorizer.grant('Group', 'argocd-refreshers', [{ verbs: ['patch'], apiGroups: ['argoproj.io'], resources: ['applications'], namespaces: ['argocd'] }]);
    await newCommit();
    const denied = await (await rig.command('freshness prod/argocd/checkout --refresh --timeout 1m', MALLORY)).first();
    expect(said(denied)).toContain('mallory@example.com may not patch applications in argocd on prod');
    expect(w.server.requestCounts.get('patch applications')).toBeUndefined();

    await rig.command('freshness prod/argocd/checkout --refresh --timeout 1m', ALICE);
    await advanceFor(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes('*prod/argocd/checkout*: 3/3 fresh')), 'all fresh');
    const patches = w.server.writes.filter((x) => x.resource === 'applications');
    expect(patches.length).toBeGreaterThanOrEqual(2);
    for (const p of patches) expect(p.subject).toEqual({ user: 'alice@example.com', groups: ['argocd-refreshers'], impersonatedBy: 'glidepath' });
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'refresh', actor: { slackUserId: ALICE }, sentAs: { user: 'alice@example.com' }, result: 'done' });
  });

  it('permissions.refresh grants the refresh on its own: the one listed refreshes (patched, audited), an approver not listed is refused', async () => {
    const config = commandsConfig();
    const rolling = config.pipelines[0]!.stages.find((st) => st.name === 'rolling')!;
    rolling.permissions = { ...rolling.permissions!, refresh: [MALLORY] };
    await start(false, config);
    const sha = await newCommit();
    const refusal = ':no_entry: Not allowed: you may not refresh in checkout@rolling: pipelines[0].stages[4].permissions.refresh allows U0MALLORY; ask one of them, or an admin to add you';
    const approver = await (await rig.command('freshness checkout@rolling --refresh --timeout 1m', ALICE)).first();
    expect(said(approver)).toBe(refusal);
    // The Refresh and approve button's refresh is held by the same permission: nothing refreshed, nothing approved.
    const clicked = await rig.click({ actionId: REFRESH_APPROVE_ACTION_ID, value: encodeRefreshApprove({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: sha })!, user: ALICE });
    expect(said(await clicked.first())).toBe(`${refusal}; nothing was approved.`);
    expect(w.server.requestCounts.get('patch applications')).toBeUndefined();

    await rig.command('freshness checkout@rolling --refresh --timeout 1m', MALLORY);
    await advanceFor(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes('*prod/argocd/checkout*: 3/3 fresh')), 'all fresh');
    expect(w.server.requestCounts.get('patch applications')).toBeGreaterThanOrEqual(2);
    expect((await rig.auditEntries()).map((e) => [e.action, e.actor.slackUserId, e.result])).toEqual([
      ['refresh', MALLORY, 'done'],
      ['refresh', ALICE, 'denied'],
      ['refresh', ALICE, 'denied'],
    ]);
  });


  it('--refresh that runs out of time says so and lists what is still stale', async () => {
    await start(false);
    await newCommit();
    // Nobody advances the simulated clock: Argo CD never gets to the refresh before the timeout.
    await rig.command('freshness prod/argocd/checkout --refresh --timeout 1s');
    const message = await eventually(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(':warning:')), 'the timeout');
    expect(message.text.split('\n')[0]).toBe(':warning: *prod/argocd/checkout*: 1/3 fresh at the timeout, after 1 refresh round; still stale: 2');
    expect(message.text.split('\n').at(-1)).toBe('Argo CD has not got to every refresh yet; run `/glidepath freshness prod/argocd/checkout --refresh` again in a few minutes, or with a longer `--timeout`.');
    expect(message.text).toMatch(/`checkout-prod` stale: refresh pending/);
  });
});

describe('approve the next RollingSync step', () => {
  it('syncs the gated step on fresh state, pinned to the revision, and the step goes Healthy', async () => {
    await start(false);
    const sha = w.git.resolve(REPO, 'main')!;
    const answer = await (await rig.command('approve prod/argocd/checkout')).first();
    expect(said(answer)).toBe(`:white_check_mark: approved RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)}: syncing checkout-prod`);
    expect(w.app('checkout-prod').operation).toMatchObject({ initiatedBy: { username: `glidepath:${ALICE}` }, sync: { revision: sha } });
    await w.clock.advance(10_000);
    expect(w.entry('prod')).toMatchObject({ status: 'Healthy', targetRevisions: [sha] });
  });

  it('one approve reads the ApplicationSet, its Applications and their AppProject once each: the freeze gate, the freshness gate and the sync judge the same read', async () => {
    await start(false);
    const reads = () => new Map([...w.server.requestCounts].filter(([k]) => k.startsWith('get ') || k.startsWith('list ')));
    const before = reads();
    const answer = await (await rig.command('approve prod/argocd/checkout')).first();
    expect(said(answer)).toMatch(/^:white_check_mark: approved RollingSync step 3 of prod\/argocd\/checkout/);
    const made = Object.fromEntries([...reads()].map(([k, n]) => [k, n - (before.get(k) ?? 0)]).filter(([, n]) => n !== 0));
    // The command's own read (which step is next) is one of each; the action's, shared by its gates and the sync, the other.
    expect(made).toEqual({ 'get applicationsets': 2, 'list applications': 2, 'get appprojects': 1 });
  });

  it('under the stale-cache fault refuses with the stale list and a Refresh-and-approve button, and keeps refusing until the children are fresh and earlier steps really Healthy', async () => {
    await start(true);
    const sha = await newCommit();
    const refusal = await (await rig.command('approve checkout@rolling')).first();
    expect(said(refusal)).toMatch(/^:warning: Not approving step 3 of checkout: 2 of its Applications are not fresh \(checkout-prod: reconciledAt \d+ s before the latest transition; checkout-staging: .*\)/);
    const blocks = JSON.stringify(refusal.body.blocks);
    expect(blocks).toContain('*Stale (2):*');
    const button = (refusal.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!.elements![0]!;
    expect(button.action_id).toBe(REFRESH_APPROVE_ACTION_ID);
    expect(JSON.parse(button.value)).toEqual({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: sha });
    expect(w.app('checkout-prod').operation).toBeUndefined();
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'approve', result: 'failed', reason: expect.stringContaining('are not fresh') });

    // Someone not allowed to approve gets nothing synced, even by the button.
    const denied = await rig.click({ actionId: REFRESH_APPROVE_ACTION_ID, value: button.value, user: MALLORY });
    await advanceFor(() => denied.responses().find((r) => said(r).includes('Not allowed')), 'the refusal of an unauthorized click');
    expect(w.app('checkout-prod').operation).toBeUndefined();

    const clicked = await rig.click({ actionId: REFRESH_APPROVE_ACTION_ID, value: button.value });
    const after = await advanceFor(() => clicked.responses().find((r) => said(r).includes('Not approving') || said(r).includes('approved')), 'the outcome of the refresh');
    expect(said(clicked.responses()[0]!)).toMatch(/^:arrows_counterclockwise: Refreshing \d stale Applications of checkout/);
    // The refresh went through the action path: its own audit entries, before the approval's.
    expect((await rig.auditEntries()).filter((e) => e.actor.slackUserId === ALICE && e.action === 'refresh').map((e) => e.result)).toEqual(['done']);
    // Fresh now, but the controller's stale cache called staging Healthy although it never synced.
    expect(said(after)).toContain(`earlier steps are not Healthy at ${sha.slice(0, 7)}`);
    expect(said(after)).toContain(`step 2: checkout-staging is OutOfSync/Healthy at ${sha.slice(0, 7)}`);
    expect(w.app('checkout-prod').operation).toBeUndefined();
  });
});

it('an unknown ApplicationSet is named, not a stack trace', async () => {
  await start(false);
  const answer = await (await rig.command('freshness prod/argocd/cart')).first();
  expect(said(answer)).toBe(':x: cart (applicationsets) was not found in prod/argocd: it may have been deleted or renamed, or its CRD is not installed');
});
