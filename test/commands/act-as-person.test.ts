/**
 * Acting as the person (issue 23, item 2): on a cluster with `authorization: kubernetes` (or
 * `both`), the clicking person's Slack user is mapped to a Kubernetes user and groups, a
 * SubjectAccessReview asks the cluster whether they may before anything is sent, and the write
 * carries Impersonate-User / Impersonate-Group, so the stand-in API server serves (and records) it
 * as them. Real Bolt app, Slack stand-in, Redis, client-node against the stand-in with deploy/rbac.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { PolicyRule } from '../../sandbox/kube/auth.js';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { APPROVE_ACTION_ID, encodeButtonValue, type ButtonValue } from '../../src/slack/buttons.js';
import { pausedAtStep1, startKubeWorld, type KubeWorld } from '../kube/support.js';
import { waitFor } from '../helpers/wait.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { ALICE, BOB, commandsConfig, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

const CAROL = 'U0CAROL';
const PATCH_ROLLOUTS: PolicyRule = { verbs: ['patch'], apiGroups: ['argoproj.io'], resources: ['rollouts'], namespaces: ['shop'] };
const PATCH_STATUS: PolicyRule = { verbs: ['patch'], apiGroups: ['argoproj.io'], resources: ['rollouts/status'], namespaces: ['shop'] };

let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;

/**
 * Cluster `prod` lets its RBAC decide. Alice is in the table with group shop-deployers (which may
 * approve); Bob is in the table without groups, and gets shop-status-patchers from the Slack user
 * group S0OPS (status only, not spec); Carol is mapped by her Slack profile's email; Mallory is
 * mapped nowhere.
 */
function config(authorization: 'kubernetes' | 'both'): ConfigFile {
  const base = commandsConfig();
  return configFileSchema.parse({
    ...base,
    clusters: base.clusters.map((c) => (c.name === 'prod' ? { ...c, authorization } : c)),
    identities: {
      users: { [ALICE]: { user: 'alice@example.com', groups: ['shop-deployers'] }, [BOB]: { user: 'bob@example.com' } },
      byEmail: { cacheSeconds: 60 },
      slackGroups: { S0OPS: ['shop-status-patchers'] },
    },
  });
}

async function start(authorization: 'kubernetes' | 'both'): Promise<void> {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop', 'pay', 'locked', 'argocd', 'kargo-demo'], controllers: { rollouts: { podReadyMs: 5000 } } });
  // The cluster's own RBAC for the people (Glidepath's account has deploy/rbac, impersonate included).
  world.server.authorizer.grant('Group', 'shop-deployers', [PATCH_ROLLOUTS, PATCH_STATUS]);
  world.server.authorizer.grant('Group', 'shop-status-patchers', [PATCH_STATUS]);
  world.server.authorizer.grant('User', 'carol@example.com', [PATCH_ROLLOUTS, PATCH_STATUS]);
  rig = await startCommandsRig({
    clusters: world.clusters,
    config: config(authorization),
    slackUsers: {
      [ALICE]: { name: 'alice' },
      [BOB]: { name: 'bob' },
      [CAROL]: { name: 'carol', email: 'Carol@Example.com' },
      [MALLORY]: { name: 'mallory' },
    },
  });
}

afterEach(async () => {
  await rig?.close();
  await world?.close();
});

const rt = () => world.store.registry.byKind('Rollout', 'argoproj.io');
const live = () => world.store.get(rt(), 'shop', 'checkout');

function approveButton(at: { generation: number; podHash: string; stepIndex: number }): string {
  const value: ButtonValue = { v: 1, p: 'checkout', r: 'rel-1', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', g: at.generation, h: at.podHash, s: at.stepIndex };
  return encodeButtonValue(value);
}

/** The writes the stand-in served to the Rollout: who each was made as. */
const rolloutWrites = () => world.server.writes.filter((w) => w.resource.startsWith('rollouts') && w.name === 'checkout');

describe('authorization: kubernetes', () => {
  it('alice approves a paused canary by button: the PATCHes arrive as alice and her groups, impersonated by Glidepath, and the audit names both', async () => {
    await start('kubernetes');
    const at = await pausedAtStep1(world, clock);
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveButton(at), user: ALICE })).first();
    expect(said(answer)).toContain('approved step 2 of prod/shop/checkout: the canary moves on');
    expect(live().status.pauseConditions ?? []).toHaveLength(0);
    const writes = rolloutWrites();
    // spec.paused is not set here, so the status patch is the one write (rollout-operations.ts).
    expect(writes.map((w) => w.resource)).toEqual(['rollouts/status']);
    for (const w of writes) expect(w.subject).toEqual({ user: 'alice@example.com', groups: ['shop-deployers'], impersonatedBy: 'glidepath' });
    const audit = await rig.auditEntries();
    expect(audit.map((e) => [e.actor.slackUserId, e.sentAs?.user, e.result])).toEqual([
      [ALICE, 'alice@example.com', 'done'],
    ]);
    expect(audit[0]!.sentAs).toEqual({ user: 'alice@example.com', groups: ['shop-deployers'] });
    expect(audit[0]!.gates?.[0]?.via).toContain('the Kubernetes RBAC of prod for alice@example.com (mapped by identities.users)');
  });

  it('bob, whose Kubernetes identity may patch rollouts/status but not rollouts, is refused before anything is sent, with the verb named', async () => {
    await start('kubernetes');
    const at = await pausedAtStep1(world, clock);
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveButton(at), user: BOB })).first();
    // The group from the Slack user group counted: only the spec patch is missing.
    expect(said(answer)).toContain('bob@example.com (groups shop-status-patchers) may not patch rollouts in shop on prod');
    expect(said(answer)).not.toContain('rollouts/status');
    expect(said(answer)).toContain('nothing was sent');
    expect(rolloutWrites()).toEqual([]);
    expect(live().status.pauseConditions).toHaveLength(1);
    const [entry] = await rig.auditEntries();
    expect(entry).toMatchObject({ actor: { slackUserId: BOB }, sentAs: { user: 'bob@example.com', groups: ['shop-status-patchers'] }, result: 'denied' });
    expect(entry!.reason).toContain('may not patch rollouts in shop on prod');
  });

  it('an unmapped Slack user is refused with how to get mapped; nothing is sent', async () => {
    await start('kubernetes');
    const at = await pausedAtStep1(world, clock);
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveButton(at), user: MALLORY })).first();
    expect(said(answer)).toContain('you have no Kubernetes identity in Glidepath');
    expect(said(answer)).toContain(`add your Kubernetes user (and groups) as identities.users.${MALLORY} in the config`);
    expect(said(answer)).toContain('your Slack profile shows no email');
    expect(rolloutWrites()).toEqual([]);
    expect(world.server.requestCounts.get('create subjectaccessreviews')).toBeUndefined();
    const [entry] = await rig.auditEntries();
    expect(entry).toMatchObject({ actor: { slackUserId: MALLORY }, result: 'denied' });
    expect(entry!.sentAs).toBeUndefined();
  });

  it('carol, mapped by the email on her Slack profile (users.info), approves by command as carol@example.com', async () => {
    await start('kubernetes');
    await pausedAtStep1(world, clock);
    const answer = await (await rig.command('approve prod/shop/checkout', CAROL)).first();
    expect(said(answer)).toBe(':white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on');
    expect(rolloutWrites().map((w) => w.subject.user)).toEqual(['carol@example.com']);
    expect((await rig.auditEntries())[0]).toMatchObject({ actor: { slackUserId: CAROL }, sentAs: { user: 'carol@example.com', groups: [] }, result: 'done' });
  });

  it('the abort dialog is not offered to someone the cluster would refuse', async () => {
    await start('kubernetes');
    await pausedAtStep1(world, clock);
    const answer = await (await rig.command('abort prod/shop/checkout', MALLORY)).first();
    expect(said(answer)).toContain('you have no Kubernetes identity in Glidepath');
    expect(rig.slack.transcript.openedViews).toEqual([]);
    expect(live().status.abort).toBeUndefined();
    // Alice, whose groups may patch the status, gets the dialog as before.
    await rig.command('abort prod/shop/checkout', ALICE);
    await waitFor(async () => rig.slack.transcript.openedViews.length === 1, 'the abort dialog for alice');
  });
});

describe('authorization: kubernetes, Kargo', () => {
  it('a promote creates the Promotion as alice (Kargo records her as its creator, its webhook checks her promote verb); bob is told both permissions he lacks', async () => {
    await start('kubernetes');
    const freight = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
    const kargo = kargoObjects(world.store, 'kargo-demo');
    kargo.stage('dev', { direct: true });
    kargo.stage('staging', { stages: ['dev'] });
    kargo.freight(freight, 'jolly-jaguar', '2026-08-20T08:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T08:40:00Z' } } });
    world.server.authorizer.grant('Group', 'shop-deployers', [
      { verbs: ['create'], apiGroups: ['kargo.akuity.io'], resources: ['promotions'], namespaces: ['kargo-demo'] },
      { verbs: ['promote'], apiGroups: ['kargo.akuity.io'], resources: ['stages'], namespaces: ['kargo-demo'], resourceNames: ['staging'] },
    ]);

    const refused = await (await rig.command('promote shop@staging --freight jolly-jaguar', BOB)).first();
    expect(said(refused)).toContain('bob@example.com (groups shop-status-patchers) may not create promotions in kargo-demo on prod, nor promote stages in kargo-demo on prod');
    expect(kargo.list('Promotion')).toEqual([]);

    const done = await (await rig.command('promote shop@staging --freight jolly-jaguar', ALICE)).first();
    expect(said(done)).toContain(':white_check_mark: created Promotion');
    const [promotion] = kargo.list('Promotion');
    expect(promotion!.metadata.annotations?.['kargo.akuity.io/create-actor']).toBe('kubernetes:alice@example.com');
    expect(world.server.writes.filter((w) => w.resource === 'promotions').map((w) => w.subject)).toEqual([{ user: 'alice@example.com', groups: ['shop-deployers'], impersonatedBy: 'glidepath' }]);
  });
});

describe('authorization: both', () => {
  it('the cluster allowing is not enough: carol, whom the config does not list, is refused by the config, and nothing is asked or sent', async () => {
    await start('both');
    const at = await pausedAtStep1(world, clock);
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveButton(at), user: CAROL })).first();
    expect(said(answer)).toContain('you may not approve in checkout@prod');
    expect(rolloutWrites()).toEqual([]);
    const alice = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveButton(at), user: ALICE })).first();
    expect(said(alice)).toContain('approved step 2 of prod/shop/checkout');
    expect(rolloutWrites().map((w) => w.subject.user)).toEqual(['alice@example.com']);
    expect((await rig.auditEntries())[0]!.gates?.[0]?.via).toMatch(/^U0ALICE and the Kubernetes RBAC of prod for alice@example.com/);
  });
});
