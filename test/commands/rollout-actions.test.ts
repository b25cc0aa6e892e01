/**
 * /glidepath approve and abort on Rollouts, and the Approve/Abort buttons of "paused" replies,
 * end to end: signed requests through the real Bolt app, the Slack stand-in, Redis, and the
 * simulated cluster with its Rollouts controller on a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { createSlackClient } from '../../src/slack/client.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import type { TargetState } from '../../src/releases/record/record.js';
import { record, stage as recordStage, target } from '../slack/support/records.js';
import { ABORT_ACTION_ID, ABORT_DIALOG_CALLBACK_ID, APPROVE_ACTION_ID, encodeButtonValue, REFRESH_APPROVE_ACTION_ID, type ButtonValue } from '../../src/slack/buttons.js';
import { approveAndAbort } from '../../src/slack/render/buttons.js';
import { eventually } from '../helpers/slack-harness.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { ALICE, BOB, CHANNEL, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop', 'pay', 'locked', 'argocd', 'kargo-demo'], controllers: { rollouts: { podReadyMs: 5000 } } });
  rig = await startCommandsRig({ clusters: world.clusters });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

const rt = () => world.store.registry.byKind('Rollout', 'argoproj.io');
const live = (ns = 'shop'): KubeObject => world.store.get(rt(), ns, 'checkout');

/** A canary of a new image, paused at its indefinite pause step (index 1, weight 20%). */
async function pausedAtStep1(ns = 'shop'): Promise<{ g: number; h: string; s: number }> {
  world.store.create(rt(), ns, rolloutManifest({ namespace: ns, name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
  await clock.advance(0);
  world.store.mutate(rt(), ns, 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
  await clock.advance(6000);
  const r = live(ns);
  expect(r.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
  return { g: r.metadata.generation!, h: r.status.currentPodHash, s: 1 };
}

/** The "paused" reply as the writer posts it, with the renderer's buttons. */
async function pausedReply(value: ButtonValue): Promise<{ ts: string; text: string; blocks: unknown[] }> {
  const text = 'checkout@prod is paused (step 2/6, weight 20%) and waits for approval.';
  const blocks = [{ type: 'section', text: { type: 'mrkdwn', text } }, { type: 'actions', block_id: 'glidepath.approval', elements: approveAndAbort(value, 'prod/shop/checkout') }];
  const res = await createSlackClient('xoxb-commands', rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text, blocks: blocks as never });
  return { ts: res.ts!, text, blocks };
}

/** The release record the reducer would hold for the paused canary (the thread's source). */
async function storeRelease(at: { g: number; h: string; s: number }, sync?: TargetState['sync']): Promise<void> {
  const paused = target('checkout', {
    generation: at.g,
    podHash: at.h,
    phase: 'Paused',
    pause: { reason: 'CanaryPauseStep' },
    step: { index: at.s, count: 6 },
    weight: 20,
    application: 'checkout-prod',
    ...(sync ? { sync } : {}),
  });
  const release = record({ releaseId: 'rel-1', status: 'Paused', stages: [recordStage('prod', 'Paused', [paused])] });
  await rig.store.update('checkout', 'rel-1', () => ({ next: release, result: null }));
}

function buttonValue(at: { g: number; h: string; s: number }, ns = 'shop', stage = 'prod'): ButtonValue {
  return { v: 1, p: 'checkout', r: 'rel-1', st: stage, k: 'Rollout', c: 'prod', ns, n: 'checkout', ...at };
}

describe('/glidepath help and usage', () => {
  it('answers help, a bad argument and an unknown subcommand with the usage and an example; nothing is changed', async () => {
    const help = await (await rig.command('help')).first();
    expect(said(help)).toContain('`approve &lt;pipeline@stage | cluster/namespace/rollout | cluster/namespace/appset&gt; [--break-glass "why"]`');
    // Escaped: Slack would read `<pipeline@stage | …>` as a mailto link, even in backticks.
    expect(said(help)).not.toMatch(/<pipeline@stage/);
    expect(said(help)).toContain('freshness');

    const missing = await (await rig.command('approve')).first();
    expect(said(missing)).toContain(':warning: name exactly one target');
    expect(said(missing)).toContain('*Usage:* `/glidepath approve');
    expect(said(missing)).toContain('`/glidepath approve prod/shop/checkout`');

    const badTarget = await (await rig.command('abort prod/shop')).first();
    expect(said(badTarget)).toContain('"prod/shop" is not a target');
    expect(said(badTarget)).toContain('*Usage:* `/glidepath abort &lt;cluster/namespace/rollout&gt;`');

    const badFlag = await (await rig.command('freshness prod/argocd/checkout --refresh --timeout soon')).first();
    expect(said(badFlag)).toContain('"soon" is not a duration: write 90s, 5m or 1h');
    expect(said(badFlag)).toContain('`/glidepath freshness prod/argocd/checkout --refresh --timeout 2m`');

    const unknown = await (await rig.command('frobnicate now')).first();
    expect(said(unknown)).toContain('there is no subcommand "frobnicate"');
    expect(said(unknown)).not.toContain('did you mean');
    expect(said(unknown)).toContain('`promote &lt;pipeline@stage');

    // A typo gets the subcommand it most likely meant; what was typed is said back without a mention.
    const typo = await (await rig.command('aprove prod/shop/checkout')).first();
    expect(said(typo)).toContain('there is no subcommand "aprove"; did you mean `approve`?');
    const typedTarget = await (await rig.command('approve <!channel>')).first();
    expect(said(typedTarget)).toContain('"&lt;!channel&gt;" is not a target');
    expect(said(typedTarget)).not.toContain('<!channel>');
    const mention = await (await rig.command('<!channel>')).first();
    expect(said(mention)).toContain('there is no subcommand "&lt;!channel&gt;"');
    expect(said(mention)).not.toContain('<!channel>');
    expect(await rig.auditEntries()).toEqual([]);
  });
});

describe('approve a Rollout paused at a canary step', () => {
  it('by command: the same patch as kubectl argo rollouts promote, the canary moves on, and the person is audited', async () => {
    await pausedAtStep1();
    const answer = await (await rig.command('approve prod/shop/checkout')).first();
    expect(answer.body).toMatchObject({ response_type: 'in_channel' });
    expect(said(answer)).toBe(':white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on');
    expect(world.server.requestCounts.get('patch rollouts/status')).toBe(1);
    await clock.advance(6000);
    expect(live().status.currentStepIndex).toBe(3);
    const audit = await rig.auditEntries();
    expect(audit.map((e) => [e.actor.slackUserId, e.action, e.target, e.result])).toEqual([
      [ALICE, 'approve', 'prod/shop/checkout', 'done'],
    ]);
    expect(audit[0]!.before).toMatchObject({ phase: 'Paused', step: { index: 1 } });
    expect(rig.log.lines.some((l) => l.msg === 'action approve done')).toBe(true);
  });

  it('by button, for a member of an allowed user group: the message then says who approved and loses its buttons', async () => {
    const at = await pausedAtStep1();
    const reply = await pausedReply(buttonValue(at));
    await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(buttonValue(at)), user: BOB, messageTs: reply.ts, messageText: reply.text, messageBlocks: reply.blocks });
    const message = await eventually(() => {
      const m = rig.slack.transcript.find(CHANNEL, reply.ts);
      return m && m.edits.length > 0 ? m : undefined;
    }, 'the clicked message to be updated');
    expect(message.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(JSON.stringify(message.blocks)).toContain(`approved step 2 of prod/shop/checkout: the canary moves on (by <@${BOB}>)`);
    expect(live().status.pauseConditions ?? []).toHaveLength(0);
    const audit = await rig.auditEntries();
    expect(audit[0]).toMatchObject({ actor: { slackUserId: BOB }, result: 'done' });
    expect(audit[0]!.gates).toEqual([{ gate: 'permission', allowed: true, via: 'S0OPS' }]);
  });

  it('by pipeline@stage: approves what the release shows paused there, at the step it shows; status lists it first', async () => {
    const at = await pausedAtStep1();
    await storeRelease(at);
    const status = await (await rig.command('status checkout')).first();
    expect(said(status)).toContain('*checkout* release `rel-1` — Paused');
    expect(said(status)).toContain('prod: Paused (0/1 Healthy) — waiting for approval: prod/shop/checkout at step 2/6');
    const answer = await (await rig.command('approve checkout@prod')).first();
    expect(said(answer)).toBe(':white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on');
    expect(live().status.pauseConditions ?? []).toHaveLength(0);
    expect((await rig.auditEntries())[0]).toMatchObject({ releaseId: 'rel-1', pipeline: 'checkout', stage: 'prod', result: 'done' });
  });

  it('tells the release thread who did what: a refused attempt and the approval each get a line', async () => {
    const at = await pausedAtStep1();
    await storeRelease(at);
    const client = createSlackClient('xoxb-commands', rig.slack.apiUrl);
    const parent = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-1 (checkout)' });
    await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('checkout', 'rel-1', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
    const value = encodeButtonValue(buttonValue(at));
    await (await rig.click({ actionId: APPROVE_ACTION_ID, value, user: MALLORY })).first();
    await rig.click({ actionId: APPROVE_ACTION_ID, value, user: ALICE });
    const thread = await eventually(() => {
      const replies = rig.slack.transcript.find(CHANNEL, parent.ts!)?.replies ?? [];
      return replies.length >= 2 ? replies : undefined;
    }, 'two lines in the release thread');
    expect(thread[0]!.text).toMatch(new RegExp(`^:no_entry: <@${MALLORY}> tried to approve step 2 of prod/shop/checkout \\(checkout@prod\\): refused, you may not approve`));
    expect(thread[1]!.text).toBe(`:white_check_mark: <@${ALICE}>: approved step 2 of prod/shop/checkout: the canary moves on`);
  });

  it('a click on the paused reply in the release thread is one change in that thread: the reply says who approved, no second line', async () => {
    const at = await pausedAtStep1();
    await storeRelease(at);
    const client = createSlackClient('xoxb-commands', rig.slack.apiUrl);
    const parent = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-1 (checkout)' });
    await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('checkout', 'rel-1', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
    const text = 'checkout@prod is paused (step 2/6, weight 20%) and waits for approval.';
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text } }, { type: 'actions', block_id: 'glidepath.approval', elements: approveAndAbort(buttonValue(at), 'prod/shop/checkout') }];
    const reply = await client.chat.postMessage({ channel: CHANNEL, thread_ts: parent.ts!, text, blocks: blocks as never });
    await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(buttonValue(at)), user: BOB, messageTs: reply.ts!, threadTs: parent.ts!, messageText: text, messageBlocks: blocks });
    const edited = await eventually(() => {
      const m = rig.slack.transcript.find(CHANNEL, reply.ts!);
      return m && m.edits.length > 0 ? m : undefined;
    }, 'the paused reply to say who approved');
    expect(JSON.stringify(edited.blocks)).toContain(`approved step 2 of prod/shop/checkout: the canary moves on (by <@${BOB}>)`);
    expect(JSON.stringify(edited.blocks)).toContain(text);
    expect(live().status.pauseConditions ?? []).toHaveLength(0);
    expect((await rig.auditEntries()).map((e) => e.result)).toEqual(['done']);
    // The audit is written before the thread line would be: by now a second line would be there.
    expect(rig.slack.transcript.find(CHANNEL, parent.ts!)?.replies.map((r) => r.ts)).toEqual([reply.ts]);
  });

  it('an edited release id in the button chooses neither the thread nor the audit: the record of the Rollout does', async () => {
    const at = await pausedAtStep1();
    await storeRelease(at);
    const client = createSlackClient('xoxb-commands', rig.slack.apiUrl);
    const threads = new ThreadStore(rig.redis, rig.keys, 3_600_000);
    const real = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-1 (checkout)' });
    await threads.saveParent('checkout', 'rel-1', { channel: CHANNEL, ts: real.ts!, rendered: 'x', version: 1 });
    const other = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-other (checkout)' });
    await rig.store.update('checkout', 'rel-other', () => ({ next: record({ releaseId: 'rel-other', status: 'Paused', stages: [recordStage('prod', 'Paused', [])] }), result: null }));
    await threads.saveParent('checkout', 'rel-other', { channel: CHANNEL, ts: other.ts!, rendered: 'x', version: 1 });

    const edited = encodeButtonValue({ ...buttonValue(at), r: 'rel-other' });
    await rig.click({ actionId: APPROVE_ACTION_ID, value: edited, user: ALICE });
    const line = await eventually(() => rig.slack.transcript.find(CHANNEL, real.ts!)?.replies[0], 'the line in the thread of the real release');
    expect(line.text).toBe(`:white_check_mark: <@${ALICE}>: approved step 2 of prod/shop/checkout: the canary moves on`);
    expect(rig.slack.transcript.find(CHANNEL, other.ts!)?.replies ?? []).toEqual([]);
    const audit = await rig.auditEntries();
    expect(audit.map((e) => e.releaseId)).toEqual(['rel-1']);
  });

  it('refuses a stale button with what changed, changes nothing, and audits the failure', async () => {
    const at = await pausedAtStep1();
    const answers = await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(buttonValue({ ...at, s: 0 })) });
    const answer = await answers.first();
    expect(answer.body).toMatchObject({ response_type: 'ephemeral' });
    expect(said(answer)).toBe(':x: checkout moved from step 1 to step 2 since the button was shown; nothing was changed');
    expect(live().status.pauseConditions).toHaveLength(1);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBeUndefined();
    expect((await rig.auditEntries())[0]).toMatchObject({ result: 'failed', reason: expect.stringContaining('since the button was shown') });
  });

  it('a stale button is answered to the clicker alone: no line in the release thread', async () => {
    const at = await pausedAtStep1();
    await storeRelease(at);
    const client = createSlackClient('xoxb-commands', rig.slack.apiUrl);
    const parent = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-1 (checkout)' });
    await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('checkout', 'rel-1', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(buttonValue({ ...at, s: 0 })) })).first();
    expect(answer.body).toMatchObject({ response_type: 'ephemeral', text: ':x: checkout moved from step 1 to step 2 since the button was shown; nothing was changed' });
    // The thread line would be posted before the answer is sent: by now it would be there.
    expect(rig.slack.transcript.find(CHANNEL, parent.ts!)?.replies ?? []).toEqual([]);
  });

  it('a typed approve whose thread lags the Rollout says what the thread showed, never a button', async () => {
    const at = await pausedAtStep1();
    // The thread (the record) still shows step 1; the Rollout is paused at step 2.
    await storeRelease({ ...at, s: 0 });
    const answer = await (await rig.command('approve prod/shop/checkout')).first();
    expect(said(answer)).toBe(':x: checkout moved from step 1 to step 2 since the release thread showed step 1; nothing was changed');
    expect(said(answer)).not.toContain('button');
    expect(live().status.pauseConditions).toHaveLength(1);
  });

  it('a change between the read and the patch (409) is answered in the words of the button', async () => {
    const at = await pausedAtStep1();
    let raced = false;
    world.server.onRequest = (req) => {
      if (raced || req.verb !== 'patch' || req.resource !== 'rollouts/status') return;
      raced = true;
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { pauseConditions: null } }, { subresource: 'status' });
      world.store.patch(rt(), 'shop', 'checkout', 'merge', { status: { currentStepIndex: 2, controllerPause: false } }, { subresource: 'status' });
    };
    const answer = await (await rig.click({ actionId: APPROVE_ACTION_ID, value: encodeButtonValue(buttonValue(at)) })).first();
    expect(raced).toBe(true);
    expect(said(answer)).toBe(':x: checkout moved from step 2 to step 3 while you clicked; nothing was changed');
    expect((await rig.auditEntries())[0]).toMatchObject({ result: 'failed' });
  });

  it('a 403 from RBAC names the rule to add', async () => {
    await pausedAtStep1();
    const answer = await (await rig.command('approve prod-no-status/shop/checkout')).first();
    expect(said(answer)).toBe(":x: Glidepath's service account may not patch rollouts/status in prod-no-status/shop; nothing was changed: add the rule from deploy/rbac/glidepath-clusterrole.yaml");
    expect(live().status.pauseConditions).toHaveLength(1);
    expect((await rig.auditEntries())[0]).toMatchObject({ stage: 'norbac', result: 'failed' });
  });

  it('refuses an unauthorized person, says who may, audits and logs the attempt; a stage with no setting names the setting to add', async () => {
    await pausedAtStep1();
    const answer = await (await rig.command('approve prod/shop/checkout', MALLORY)).first();
    expect(said(answer)).toBe(
      `:no_entry: Not allowed: you may not approve in checkout@prod: pipelines[0].stages[0].permissions.approve allows ${ALICE}, S0OPS; ask one of them, or an admin to add you`,
    );
    expect(live().status.pauseConditions).toHaveLength(1);
    expect(world.server.requestCounts.get('patch rollouts/status')).toBeUndefined();
    expect((await rig.auditEntries())[0]).toMatchObject({ actor: { slackUserId: MALLORY }, action: 'approve', target: 'prod/shop/checkout', result: 'denied' });
    expect(rig.log.lines.some((l) => l.msg === 'action approve denied')).toBe(true);

    await pausedAtStep1('locked');
    const locked = await (await rig.command('approve prod/locked/checkout')).first();
    expect(said(locked)).toContain('nobody may approve in checkout@locked yet: add Slack user or group ids to pipelines[0].stages[2].permissions.approve');
    expect(live('locked').status.pauseConditions).toHaveLength(1);
  });

  it('with requireTwoApprovers the first approval is recorded and only a second, different person moves the Rollout', async () => {
    const at = await pausedAtStep1('pay');
    const value = encodeButtonValue(buttonValue(at, 'pay', 'pay'));
    await rig.click({ actionId: APPROVE_ACTION_ID, value, user: ALICE });
    await eventually(async () => (await rig.auditEntries()).find((e) => e.actor.slackUserId === ALICE && e.result === 'allowed'), 'the first approval');
    expect(live('pay').status.pauseConditions).toHaveLength(1);
    const again = await (await rig.click({ actionId: APPROVE_ACTION_ID, value, user: ALICE })).first();
    expect(said(again)).toBe(`:no_entry: Not allowed: you already approved this (approval 1 of 2: <@${ALICE}>); checkout@pay needs 1 more approval of this same state, from a different person`);
    expect(live('pay').status.pauseConditions).toHaveLength(1);
    const reply = await pausedReply(buttonValue(at, 'pay', 'pay'));
    await rig.click({ actionId: APPROVE_ACTION_ID, value, user: BOB, messageTs: reply.ts, messageText: reply.text, messageBlocks: reply.blocks });
    const message = await eventually(() => rig.slack.transcript.find(CHANNEL, reply.ts)?.edits.length ? rig.slack.transcript.find(CHANNEL, reply.ts) : undefined, 'the second approval');
    expect(JSON.stringify(message.blocks)).toContain(`(approval 2 of 2: <@${ALICE}>, <@${BOB}>)`);
    expect(live('pay').status.pauseConditions ?? []).toHaveLength(0);
    const results = (await rig.auditEntries()).map((e) => [e.actor.slackUserId, e.result]);
    expect(results).toEqual([
      [BOB, 'done'],
      [ALICE, 'denied'],
      [ALICE, 'allowed'],
    ]);
  });
});

it('a button whose object is gone answers with what the cluster said, not silence', async () => {
  const value = JSON.stringify({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: 'abc1234' });
  const answer = await (await rig.click({ actionId: REFRESH_APPROVE_ACTION_ID, value })).first();
  expect(said(answer)).toBe(':x: checkout (applicationsets) was not found in prod/argocd: it may have been deleted or renamed, or its CRD is not installed');
});

describe('abort', () => {
  it('opens a dialog naming cluster, namespace, Rollout, step and weight; submitting it aborts and says how to go back', async () => {
    await pausedAtStep1();
    await rig.command('abort prod/shop/checkout');
    const view = await eventually(() => rig.slack.transcript.openedViews[0] as Record<string, unknown> | undefined, 'the dialog');
    const shown = JSON.stringify(view);
    for (const part of ['*Cluster:* prod', '*Namespace:* shop', '*Rollout:* checkout', '*Current step:* step 2/6', '*Canary weight:* 20%']) expect(shown).toContain(part);
    expect(live().status.abort).toBeFalsy();

    await rig.submitView({ callback_id: ABORT_DIALOG_CALLBACK_ID, private_metadata: view.private_metadata });
    // Only visible to the person who submitted: an ephemeral message, not one in the channel.
    const said = await eventually(() => rig.slack.transcript.ephemerals.find((m) => m.user === ALICE && m.text.includes('aborted prod/shop/checkout')), 'the abort answer');
    expect(rig.slack.transcript.messages(CHANNEL).filter((m) => m.text.includes('aborted prod/shop/checkout'))).toEqual([]);
    expect(said.text).toContain('retry the Rollout (`kubectl argo rollouts retry rollout checkout -n shop`, which writes status.abort=false), or revert the change in git');
    expect(said.text).toContain('There is no undo here');
    expect(live().status.abort).toBe(true);
    await clock.advance(0);
    expect(live().status.phase).toBe('Degraded');
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'abort', result: 'done', actor: { slackUserId: ALICE } });
  });

  it('opens no dialog for someone who may not abort: refused at once, audited, nothing changed', async () => {
    await pausedAtStep1();
    const answer = await (await rig.command('abort prod/shop/checkout', BOB)).first();
    expect(said(answer)).toBe(`:no_entry: Not allowed: you may not abort in checkout@prod: pipelines[0].stages[0].permissions.abort allows ${ALICE}; ask one of them, or an admin to add you`);
    expect(rig.slack.transcript.openedViews).toEqual([]);
    expect(live().status.abort).toBeFalsy();
    expect((await rig.auditEntries())[0]).toMatchObject({ actor: { slackUserId: BOB }, action: 'abort', result: 'denied' });
  });

  it('aborts while an Argo CD PostSync hook pins the sync: the abort is on the Rollout, the running sync does not stop it', async () => {
    await pausedAtStep1();
    world.store.create(world.store.registry.byKind('Application'), 'argocd', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'checkout-prod' },
      spec: { project: 'default', source: { repoURL: 'https://git.example.com/shop/deploy.git', path: 'checkout', targetRevision: 'main' }, destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
    });
    world.store.mutate(world.store.registry.byKind('Application'), 'argocd', 'checkout-prod', (a) => {
      a.status = { operationState: { phase: 'Running', message: 'waiting for completion of hook batch/Job/smoke-test', startedAt: '2026-08-20T08:50:00Z', operation: { sync: { revision: 'abc1234' } } } };
    });
    const at = { g: live().metadata.generation!, h: live().status.currentPodHash as string, s: 1 };
    await storeRelease(at, { phase: 'Running', message: 'waiting for completion of hook batch/Job/smoke-test', runningHooks: ['batch/Job/smoke-test'] });
    const value = encodeButtonValue(buttonValue(at));
    const reply = await pausedReply(JSON.parse(value) as ButtonValue);
    await rig.click({ actionId: ABORT_ACTION_ID, value, messageTs: reply.ts, messageText: reply.text, messageBlocks: reply.blocks });
    const message = await eventually(() => rig.slack.transcript.find(CHANNEL, reply.ts)?.edits.length ? rig.slack.transcript.find(CHANNEL, reply.ts) : undefined, 'the aborted message');
    expect(JSON.stringify(message.blocks)).toContain(`aborted prod/shop/checkout: traffic goes back to the stable version`);
    expect(JSON.stringify(message.blocks)).toContain(`(by <@${ALICE}>)`);
    expect(message.text).toContain("Argo CD's sync of checkout-prod is still Running with hooks (batch/Job/smoke-test): a revert in git will not sync until they finish or the operation is terminated (`argocd app terminate-op checkout-prod`)");
    expect(message.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(live().status.abort).toBe(true);
    expect(world.store.get(world.store.registry.byKind('Application'), 'argocd', 'checkout-prod').status.operationState.phase).toBe('Running');
  });
});
