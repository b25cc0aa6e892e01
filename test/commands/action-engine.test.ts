/**
 * The action engine (src/actions/) seen from Slack: every kind of action leaves exactly one audit
 * entry with each gate's decision; a refresh nobody allowed is refused before any PATCH reaches
 * the cluster, however it was asked; a person's access is asked of the cluster once per click;
 * and a promote of the default Freight from the Promote button tells that Freight's release
 * thread. Real Bolt, Slack stand-in, Redis, client-node against the stand-in API server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { createSlackClient } from '../../src/slack/client.js';
import { ABORT_DIALOG_CALLBACK_ID, APPROVE_ACTION_ID, encodeAbortDialog, encodeButtonValue, encodePromoteButton, encodeRefreshApprove, PROMOTE_ACTION_ID, REFRESH_APPROVE_ACTION_ID, type ButtonValue } from '../../src/slack/buttons.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import type { StoredAuditEntry } from '../../src/audit/audit-log.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from '../kube/argo-world.js';
import { pausedAtStep1, startKubeWorld, type KubeWorld } from '../kube/support.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { record, stage as recordStage } from '../slack/support/records.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { eventually } from '../helpers/slack-harness.js';
import { ALICE, BOB, CHANNEL, commandsConfig, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

let rig: CommandsRig | undefined;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await rig?.close();
  await stop?.();
  rig = undefined;
  stop = undefined;
});

/** Each entry as [action, who, result, the gates asked and what each said]. */
const gatesOf = (entries: StoredAuditEntry[]) => entries.map((e) => [e.action, e.actor.slackUserId, e.result, (e.gates ?? []).map((g) => `${g.gate}:${g.allowed ? 'allowed' : 'held'}`)]);

describe('on an ApplicationSet (refresh, RollingSync step)', () => {
  let w: ArgoWorld;

  async function start(config: ConfigFile = commandsConfig()): Promise<void> {
    w = await startArgoWorld({ staleCache: false, maxUpdate: [undefined, undefined, 0] });
    stop = () => w.stop();
    rig = await startCommandsRig({ clusters: w.clusters, now: () => w.clock.now(), followTimeoutMs: 60_000, config });
    await w.clock.advance(150_000);
  }

  /** A new commit, seen so far only by dev: staging and prod are stale. */
  async function newCommit(): Promise<string> {
    const sha = w.git.commit(REPO, 'main', tree('1.29.0'));
    annotateRefresh(w, 'dev');
    await w.clock.advance(1000);
    return sha;
  }

  async function advanceFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const found = await probe();
      if (found !== undefined) return found;
      await w.clock.advance(500);
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`gave up waiting for ${what}`);
  }

  const applicationWrites = () => w.server.writes.filter((x) => x.resource.startsWith('applications'));

  it('a refresh by someone not allowed is refused before any PATCH, by command and by the Refresh-and-approve button, each with one audit entry and a line in the thread', async () => {
    await start();
    await rig!.store.update('checkout', 'rel-a', () => ({ next: record({ pipeline: 'checkout', releaseId: 'rel-a', stages: [recordStage('rolling', 'Waiting')] }), result: null }));
    const parent = await createSlackClient('xoxb-commands', rig!.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: 'Release rel-a (checkout)' });
    await new ThreadStore(rig!.redis, rig!.keys, 3_600_000).saveParent('checkout', 'rel-a', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
    const sha = await newCommit();
    const typed = await (await rig!.command('freshness prod/argocd/checkout --refresh', MALLORY)).first();
    expect(said(typed)).toMatch(/^:no_entry: Not allowed: you may not refresh in checkout@rolling/);
    const value = encodeRefreshApprove({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: sha })!;
    const clicked = await (await rig!.click({ actionId: REFRESH_APPROVE_ACTION_ID, value, user: MALLORY })).first();
    expect(said(clicked)).toMatch(/^:no_entry: Not allowed: you may not approve in checkout@rolling/);
    expect(applicationWrites()).toEqual([]);
    expect(w.app('checkout-prod').metadata.annotations?.['argocd.argoproj.io/refresh']).toBeUndefined();
    expect(gatesOf(await rig!.auditEntries())).toEqual([
      ['approve', MALLORY, 'denied', ['permission:held']],
      ['refresh', MALLORY, 'denied', ['permission:held']],
    ]);
    const lines = await eventually(() => {
      const replies = rig!.slack.transcript.find(CHANNEL, parent.ts!)?.replies ?? [];
      return replies.length >= 2 ? replies.map((r) => r.text) : undefined;
    }, 'both refusals in the release thread');
    expect(lines[0]).toMatch(new RegExp(`^:no_entry: <@${MALLORY}> tried to refresh 2 stale Applications of prod/argocd/checkout \\(checkout@rolling\\): refused`));
    expect(lines[1]).toMatch(new RegExp(`^:no_entry: <@${MALLORY}> tried to approve RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)} \\(checkout@rolling\\): refused`));
  });

  it('a RollingSync step refused as stale, a refresh, and the step approved again: one audit entry each, with the gates each passed', async () => {
    await start();
    await newCommit();
    const stale = await (await rig!.command('approve checkout@rolling')).first();
    expect(said(stale)).toMatch(/^:warning: Not approving step 3 of checkout: 2 of its Applications are not fresh/);
    expect(applicationWrites()).toEqual([]);
    await rig!.command('freshness prod/argocd/checkout --refresh --timeout 1m');
    await advanceFor(() => rig!.slack.transcript.messages(CHANNEL).find((m) => m.text.includes('*prod/argocd/checkout*: 3/3 fresh')), 'all fresh');
    // Fresh now: the freshness gate lets it through, and the write judges the earlier steps itself.
    await (await rig!.command('approve checkout@rolling')).first();
    const entries = await rig!.auditEntries();
    expect(gatesOf(entries).map(([action, who, , gates]) => [action, who, gates])).toEqual([
      ['approve', ALICE, ['permission:allowed', 'freshness:allowed']],
      ['refresh', ALICE, ['permission:allowed']],
      ['approve', ALICE, ['permission:allowed', 'freshness:held']],
    ]);
    expect(entries.map((e) => e.result).slice(1)).toEqual(['done', 'failed']);
    expect(entries[2]!.gates![1]).toMatchObject({ gate: 'freshness', stale: ['checkout-prod', 'checkout-staging'] });
    expect(entries[1]!.gates![0]).toMatchObject({ via: ALICE });
  });

  it('authorization: kubernetes: a Refresh-and-approve click asks the cluster about the person once, not once per write', async () => {
    const base = commandsConfig();
    await start(
      configFileSchema.parse({
        ...base,
        clusters: base.clusters.map((c) => (c.name === 'prod' ? { ...c, authorization: 'kubernetes' } : c)),
        identities: { users: { [ALICE]: { user: 'alice@example.com', groups: ['argocd-operators'] } } },
      }),
    );
    w.server.authorizer.grant('Group', 'argocd-operators', [{ verbs: ['patch'], apiGroups: ['argoproj.io'], resources: ['applications'], namespaces: ['argocd'] }]);
    const sha = await newCommit();
    const value = encodeRefreshApprove({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: sha })!;
    const clicked = await rig!.click({ actionId: REFRESH_APPROVE_ACTION_ID, value });
    await advanceFor(() => clicked.responses().find((r) => /Not approving|approved|Not fresh/.test(said(r))), 'the outcome of the click');
    // The refresh, then the approval: two requests, each audited once, the access asked once.
    const entries = await rig!.auditEntries();
    expect(entries.map((e) => [e.action, e.sentAs?.user])).toEqual([
      ['approve', 'alice@example.com'],
      ['refresh', 'alice@example.com'],
    ]);
    expect(w.server.requestCounts.get('create subjectaccessreviews')).toBe(1);
    for (const p of applicationWrites()) expect(p.subject).toMatchObject({ user: 'alice@example.com', impersonatedBy: 'glidepath' });
  });
});

describe('on a Rollout and Kargo (canary step, two approvers, abort, promote)', () => {
  let clock: FakeClock;
  let world: KubeWorld;
  const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';

  async function start(config: ConfigFile = commandsConfig()): Promise<void> {
    clock = new FakeClock('2026-08-20T12:00:00Z');
    world = await startKubeWorld({ clock, namespaces: ['shop', 'pay', 'locked', 'argocd', 'kargo-demo'], controllers: { rollouts: { podReadyMs: 5000 } } });
    stop = () => world.close();
    rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now(), config });
  }

  const button = (at: { generation: number; podHash: string; stepIndex: number }, stage = 'prod'): string => {
    const value: ButtonValue = { v: 1, p: 'checkout', r: 'rel-1', st: stage, k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', g: at.generation, h: at.podHash, s: at.stepIndex };
    return encodeButtonValue(value);
  };

  it('a canary approval, a refused second click, an abort and a promote: one audit entry each, with its gates', async () => {
    await start();
    const at = await pausedAtStep1(world, clock);
    await (await rig!.click({ actionId: APPROVE_ACTION_ID, value: button(at) })).first();
    // The same button again: the Rollout moved on, so the write itself refuses (a stale button).
    await (await rig!.click({ actionId: APPROVE_ACTION_ID, value: button(at) })).first();
    await rig!.submitView({ callback_id: ABORT_DIALOG_CALLBACK_ID, private_metadata: encodeAbortDialog({ c: 'prod', ns: 'shop', n: 'checkout', channel: CHANNEL }) });
    await eventually(async () => (await rig!.auditEntries()).find((e) => e.action === 'abort'), 'the abort audited');

    const kargo = kargoObjects(world.store, 'kargo-demo');
    kargo.stage('dev', { direct: true });
    kargo.stage('staging', { stages: ['dev'] });
    kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' } } });
    const promoted = await (await rig!.command('promote shop@staging')).first();
    expect(said(promoted)).toContain('created Promotion');

    expect(gatesOf(await rig!.auditEntries())).toEqual([
      ['promote', ALICE, 'done', ['permission:allowed']],
      ['abort', ALICE, 'done', ['permission:allowed']],
      ['approve', ALICE, 'failed', ['permission:allowed']],
      ['approve', ALICE, 'done', ['permission:allowed']],
    ]);
  });

  it('two approvers: the first approval and the second are one entry each, the approvals gate saying where it stood', async () => {
    await start();
    const rt = world.store.registry.byKind('Rollout', 'argoproj.io');
    // A Rollout in pay (the stage with requireTwoApprovers), paused at its first pause.
    world.store.create(rt, 'pay', rolloutManifest({ namespace: 'pay', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
    await clock.advance(0);
    world.store.mutate(rt, 'pay', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
    await clock.advance(6000);
    const paused = world.store.get(rt, 'pay', 'checkout');
    expect(paused.status).toMatchObject({ phase: 'Paused' });
    const value = encodeButtonValue({ v: 1, p: 'checkout', r: 'rel-1', st: 'pay', k: 'Rollout', c: 'prod', ns: 'pay', n: 'checkout', g: paused.metadata.generation!, h: paused.status.currentPodHash, s: paused.status.currentStepIndex });
    await (await rig!.click({ actionId: APPROVE_ACTION_ID, value, user: ALICE })).first();
    await (await rig!.click({ actionId: APPROVE_ACTION_ID, value, user: BOB })).first();
    expect(gatesOf(await rig!.auditEntries())).toEqual([
      ['approve', BOB, 'done', ['permission:allowed', 'approvals:allowed']],
      ['approve', ALICE, 'allowed', ['permission:allowed', 'approvals:held']],
    ]);
  });

  it('the Promote button with no Freight named promotes the newest available and tells that Freight\'s release thread', async () => {
    const config = commandsConfig();
    config.clusters.find((c) => c.name === 'prod')!.facts = 'watch';
    await start(config);
    const kargo = kargoObjects(world.store, 'kargo-demo');
    kargo.stage('dev', { direct: true });
    kargo.stage('staging', { stages: ['dev'] });
    kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' } } });
    const threadOf = async (releaseId: string): Promise<string> => {
      await rig!.store.update('shop', releaseId, () => ({ next: record({ pipeline: 'shop', releaseId, stages: [recordStage('staging', 'Waiting'), recordStage('prod', 'Waiting')] }), result: null }));
      const parent = await createSlackClient('xoxb-commands', rig!.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: `Release ${releaseId} (shop)` });
      await new ThreadStore(rig!.redis, rig!.keys, 3_600_000).saveParent('shop', releaseId, { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
      return parent.ts!;
    };
    // The button's release is another one in flight; the Freight's own release has a thread too.
    const clickedIn = await threadOf('rel-k');
    const freightThread = await threadOf(`freight-${NEW}`);
    // From staging's configured stage's upstream (none: dev is not a configured stage), so no Freight is named.
    const value = encodePromoteButton({ v: 1, p: 'shop', r: 'rel-k', st: 'staging', from: 'none' });
    await rig!.click({ actionId: PROMOTE_ACTION_ID, value });
    const replies = (ts: string) => rig!.slack.transcript.find(CHANNEL, ts)!.replies.map((r) => r.text);
    const line = await eventually(() => replies(freightThread)[0], "the line in the Freight's release thread");
    expect(line).toMatch(new RegExp(`^:white_check_mark: <@${ALICE}>: created Promotion \\S+ of jolly-jaguar \\(Freight ${NEW.slice(0, 7)}\\) to prod/kargo-demo/staging$`));
    expect(replies(clickedIn)).toEqual([]);
    const [entry] = await rig!.auditEntries();
    expect(entry).toMatchObject({ action: 'promote', result: 'done', releaseId: `freight-${NEW}`, gates: [{ gate: 'permission', allowed: true }] });
  });
});
