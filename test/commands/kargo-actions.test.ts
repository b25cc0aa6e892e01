/**
 * /glidepath promote and status on Kargo Stages, against the stand-in API server with Kargo's
 * admission webhook and (where phases matter) the Kargo controller simulator.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackClient } from '../../src/slack/client.js';
import { PROMOTE_ACTION_ID, PROMOTE_CONFIRM_ACTION_ID } from '../../src/slack/buttons.js';
import { renderReply } from '../../src/slack/render/reply.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import { record, reply, stage as recordStage, T0, target } from '../slack/support/records.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { KargoController } from '../../sandbox/kube/controllers/kargo.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { kargoObjects, type KargoObjects } from '../helpers/kargo-objects.js';
import { advanceClockUntil } from '../helpers/wait.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { eventually } from '../helpers/slack-harness.js';
import { ALICE, CHANNEL, commandsConfig, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

const NS = 'kargo-demo';
const OLD = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
let clock: FakeClock;
let world: KubeWorld;
let kargo: KargoObjects;
let rig: CommandsRig;

const rt = (kind: string) => world.store.registry.byKind(kind, 'kargo.akuity.io');

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T12:00:00Z');
  world = await startKubeWorld({ clock });
  kargo = kargoObjects(world.store, NS);
  kargo.stage('dev', { direct: true });
  kargo.stage('staging', { stages: ['dev'] });
  kargo.stage('prod-eu', { stages: ['staging'], requiredSoakTime: '1h' }, { tier: 'prod' });
  kargo.stage('prod-us', { stages: ['staging'] }, { tier: 'prod' });
  kargo.freight(OLD, 'wonky-wombat', '2026-08-19T10:00:00Z', {
    verifiedIn: { dev: { verifiedAt: '2026-08-19T10:30:00Z' }, staging: { verifiedAt: '2026-08-19T11:00:00Z' } },
    currentlyIn: { staging: { since: '2026-08-19T10:45:00Z' } },
  });
  kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', {
    verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' }, staging: { verifiedAt: '2026-08-20T11:50:00Z' } },
    currentlyIn: { staging: { since: '2026-08-20T11:45:00Z' } },
  });
  rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now() });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

const promotions = (): KubeObject[] => kargo.list('Promotion');

describe('promote', () => {
  it('by selector: lists the matched Stages and asks first; at the click, Stages that disappeared or appeared are named and not promoted', async () => {
    const ask = await (await rig.command('promote shop@prod --freight jolly-jaguar')).first();
    expect(said(ask)).toBe('Promote Freight jolly-jaguar to 2 Stages in kargo-demo: `prod-eu`, `prod-us`?');
    const button = (ask.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!.elements![0]!;
    expect(button.action_id).toBe(PROMOTE_CONFIRM_ACTION_ID);
    expect(promotions()).toEqual([]);

    // Stages come and go between the question and the click.
    world.store.delete(rt('Stage'), NS, 'prod-eu');
    kargo.stage('prod-ap', { stages: ['staging'] }, { tier: 'prod' });

    // The question was an ephemeral answer: it is replaced through the click's response_url.
    const clicked = await rig.click({ actionId: PROMOTE_CONFIRM_ACTION_ID, value: button.value, ephemeral: true, messageText: said(ask), messageBlocks: ask.body.blocks as unknown[] });
    const replaced = await eventually(() => clicked.responses().find((r) => r.body.replace_original === true), 'the question replaced');
    expect(said(replaced)).toContain(`<@${ALICE}> confirmed:`);
    expect((replaced.body.blocks as { type: string }[]).some((b) => b.type === 'actions')).toBe(false);
    const done = await eventually(() => clicked.responses().find((r) => r.body.response_type === 'in_channel'), 'the outcome');
    const created = promotions();
    expect(created.map((p) => p.spec.stage)).toEqual(['prod-us']);
    const name = created[0]!.metadata.name!;
    expect(name).not.toContain('promo-');
    expect(said(done)).toContain(`\`prod-us\`: :white_check_mark: created Promotion ${name} of jolly-jaguar (Freight f0e1d2c) to prod/kargo-demo/prod-us`);
    expect(said(done)).toContain('no longer matched, not promoted: `prod-eu`');
    expect(said(done)).toContain('matched since you were asked, not promoted (run the command again to include them): `prod-ap`');
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'promote', result: 'done', target: 'prod/kargo-demo/prod-us', after: { promotion: name, freight: NEW } });
  });

  it('when a selector matches more Stages than one confirm button can carry, asks to narrow the choice and promotes nothing', async () => {
    for (let i = 0; i < 40; i++) kargo.stage(`prod-${String(i).padStart(2, '0')}-${'x'.repeat(50)}`, { stages: ['staging'] }, { tier: 'prod' });
    const ask = await (await rig.command('promote shop@prod --freight jolly-jaguar')).first();
    expect(said(ask)).toBe(
      ':information_source: 42 Stages match stages with labels tier=prod in project kargo-demo: too many to confirm with one button; narrow the choice (--stage, --selector), or promote them one by one with `/glidepath promote kargo-demo/&lt;stage&gt;`. Nothing was promoted.',
    );
    expect(ask.body.blocks).toBeUndefined();
    expect(promotions()).toEqual([]);
  });

  it('a confirm or Promote button whose value was edited is refused with the command to use instead', async () => {
    const confirm = await (await rig.click({ actionId: PROMOTE_CONFIRM_ACTION_ID, value: '{"v":1,"c":"prod"}' })).first();
    expect(said(confirm)).toBe(':x: This button does not name Stages to promote; nothing was changed. Run `/glidepath promote` with --stage or --selector again.');
    const promote = await (await rig.click({ actionId: PROMOTE_ACTION_ID, value: 'not json' })).first();
    expect(said(promote)).toBe(':x: This button names no configured stage to promote to; nothing was changed. Use `/glidepath promote &lt;pipeline@stage&gt;`.');
    expect(promotions()).toEqual([]);
  });

  it('refuses Freight that is not available to the Stage, with the reason, and creates nothing', async () => {
    const answer = await (await rig.command('promote kargo-demo/prod-eu --freight jolly-jaguar')).first();
    expect(said(answer)).toBe(`\`prod-eu\`: :x: jolly-jaguar (Freight ${NEW.slice(0, 7)}) is not available to Stage prod-eu: verified in staging but soaked 15m of the required 1h; nothing was changed`);
    expect(promotions()).toEqual([]);
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'promote', result: 'failed', actor: { slackUserId: ALICE } });
  });

  it('a promote refused before it reaches Kargo is audited too: no permission, or no Freight available', async () => {
    kargo.stage('canary', { stages: ['prod-us'] });
    const denied = await (await rig.command('promote kargo-demo/canary', MALLORY)).first();
    expect(said(denied)).toMatch(/^`canary`: :no_entry: Not allowed: /);
    const none = await (await rig.command('promote kargo-demo/canary')).first();
    expect(said(none)).toBe('`canary`: :x: no Freight is available to canary yet (none is verified in all its upstream Stages); nothing was changed');
    expect(promotions()).toEqual([]);
    const audit = await rig.auditEntries();
    expect(audit.map((e) => [e.actor.slackUserId, e.action, e.target, e.result])).toEqual([
      [ALICE, 'promote', 'prod/kargo-demo/canary', 'failed'],
      [MALLORY, 'promote', 'prod/kargo-demo/canary', 'denied'],
    ]);
  });

  it('by default promotes the newest available Freight, reports the real Promotion name and follows its phase to the end in the release thread', async () => {
    const kargo = new KargoController({ store: world.store, clock, stepDurationMs: 1000 }).start();
    try {
      const release = record({ pipeline: 'shop', releaseId: 'rel-k', stages: [recordStage('staging', 'Waiting'), recordStage('prod', 'Waiting')] });
      await rig.store.update('shop', 'rel-k', () => ({ next: release, result: null }));
      const parent = await createSlackClient('xoxb-commands', rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: 'Release rel-k (shop)' });
      await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('shop', 'rel-k', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });

      const answer = await (await rig.command('promote shop@staging')).first();
      const name = promotions()[0]!.metadata.name!;
      expect(promotions()[0]!.spec).toMatchObject({ stage: 'staging', freight: NEW });
      expect(said(answer)).toContain(`created Promotion ${name} of jolly-jaguar (Freight f0e1d2c)`);
      const thread = () => rig.slack.transcript.find(CHANNEL, parent.ts!)!.replies.map((r) => r.text);
      await eventually(() => thread().some((t) => t.includes('following its phase')) || undefined, 'the follow line in the release thread');
      await advanceClockUntil(clock, () => promotions()[0]!.status?.phase === 'Succeeded', 'the Promotion to succeed');
      // Slack allows about one message a second per channel: the lines arrive as it lets them.
      await eventually(() => thread().some((t) => t.includes('is Succeeded')) || undefined, 'the end of the Promotion in the thread');
      expect(thread()[0]).toBe(`:white_check_mark: <@${ALICE}>: created Promotion ${name} of jolly-jaguar (Freight ${NEW.slice(0, 7)}) to prod/kargo-demo/staging`);
      expect(thread()).toContain(`:arrow_forward: Promotion \`${name}\` to \`staging\` (kargo-demo): following its phase`);
      expect(thread().some((t) => t.includes('is Running'))).toBe(true);
      expect(thread().at(-1)).toBe(`:white_check_mark: \`${name}\` is Succeeded`);
      expect(rig.slack.transcript.messages(CHANNEL)).toHaveLength(1);
    } finally {
      kargo.stop();
    }
  });
});

describe('promote on a watched cluster', () => {
  /** A release with a thread in the shop pipeline, as the worker would have opened it. */
  async function releaseWithThread(releaseId: string): Promise<string> {
    const release = record({ pipeline: 'shop', releaseId, stages: [recordStage('staging', 'Waiting'), recordStage('prod', 'Waiting')] });
    await rig.store.update('shop', releaseId, () => ({ next: release, result: null }));
    const parent = await createSlackClient('xoxb-commands', rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: `Release ${releaseId} (shop)` });
    await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('shop', releaseId, { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
    return parent.ts!;
  }

  it('with the default (newest) Freight tells that Freight\'s release thread, refused or done, and the audit names the release', async () => {
    await rig.close();
    const config = commandsConfig();
    config.clusters.find((c) => c.name === 'prod')!.facts = 'watch';
    rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now(), config });
    // jolly-jaguar (NEW) is the newest Freight available to staging; another release is in flight there too.
    const freightThread = await releaseWithThread(`freight-${NEW}`);
    const otherThread = await releaseWithThread('rel-other');
    const replies = (ts: string) => rig.slack.transcript.find(CHANNEL, ts)!.replies.map((r) => r.text);

    const denied = await (await rig.command('promote shop@staging', MALLORY)).first();
    expect(said(denied)).toMatch(/^`staging`: :no_entry: Not allowed: you may not promote in shop@staging/);
    await eventually(() => replies(freightThread)[0], 'the refusal in the Freight\'s release thread');
    expect(replies(freightThread)[0]).toMatch(new RegExp(`^:no_entry: <@${MALLORY}> tried to promote the newest available Freight, jolly-jaguar \\(Freight ${NEW.slice(0, 7)}\\), to prod/kargo-demo/staging \\(shop@staging\\): refused, you may not promote`));

    const answer = await (await rig.command('promote shop@staging')).first();
    const name = promotions()[0]!.metadata.name!;
    expect(promotions()[0]!.spec).toMatchObject({ stage: 'staging', freight: NEW });
    expect(said(answer)).toContain(`created Promotion ${name} of jolly-jaguar (Freight ${NEW.slice(0, 7)}) to prod/kargo-demo/staging; followed in the release thread of jolly-jaguar (Freight ${NEW.slice(0, 7)}) (release`);
    await eventually(() => replies(freightThread)[1], 'the action line in the Freight\'s release thread');
    expect(replies(freightThread)[1]).toBe(`:white_check_mark: <@${ALICE}>: created Promotion ${name} of jolly-jaguar (Freight ${NEW.slice(0, 7)}) to prod/kargo-demo/staging`);
    expect(replies(otherThread)).toEqual([]);
    expect((await rig.auditEntries()).map((e) => [e.actor.slackUserId, e.result, e.releaseId])).toEqual([
      [ALICE, 'done', `freight-${NEW}`],
      [MALLORY, 'denied', `freight-${NEW}`],
    ]);
  });
});

describe('the Promote button of a healthy stage', () => {
  it('promotes the Freight that proved healthy upstream (asking first for a selector stage), then shows who clicked and drops the button; refuses once the release is over', async () => {
    world.store.patch(rt('Stage'), NS, 'staging', 'merge', { status: { freightHistory: [{ id: 'c0', items: { 'Warehouse/shop': { name: OLD } } }] } }, { subresource: 'status' });
    const release = record({ pipeline: 'shop', releaseId: 'rel-k', stages: [recordStage('staging', 'Healthy', [], { healthyAt: T0 }), recordStage('prod', 'Waiting')] });
    await rig.store.update('shop', 'rel-k', () => ({ next: release, result: null }));
    // As the reducer worker hands it over: the next stage is a Kargo Stage, and staging runs OLD.
    const rendered = renderReply(reply('stage-healthy', { promoteTo: 'prod', freight: OLD }, { stage: 'staging', target: undefined }), release);
    const client = createSlackClient('xoxb-commands', rig.slack.apiUrl);
    const posted = await client.chat.postMessage({ channel: CHANNEL, text: rendered.text, blocks: rendered.blocks as never });
    const value = (rendered.blocks.find((b) => b.type === 'actions') as { elements: { value: string }[] }).elements[0]!.value;

    const ask = await (await rig.click({ actionId: PROMOTE_ACTION_ID, value, messageTs: posted.ts!, messageText: rendered.text, messageBlocks: rendered.blocks })).first();
    expect(said(ask)).toBe(`Promote Freight ${OLD} to 2 Stages in kargo-demo: \`prod-eu\`, \`prod-us\`?`);
    const message = rig.slack.transcript.find(CHANNEL, posted.ts!)!;
    await eventually(() => message.edits.length > 0 || undefined, 'the clicked message to be updated');
    expect(message.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(JSON.stringify(message.blocks)).toContain(`<@${ALICE}> asked to promote Freight ${OLD} to prod`);
    expect(promotions()).toEqual([]);

    // Staging moved on to NEW since: the button's Freight is not what proved healthy any more.
    world.store.patch(rt('Stage'), NS, 'staging', 'merge', { status: { freightHistory: [{ id: 'c1', items: { 'Warehouse/shop': { name: NEW } } }] } }, { subresource: 'status' });
    const stale = await (await rig.click({ actionId: PROMOTE_ACTION_ID, value })).first();
    expect(said(stale)).toBe(`:x: Freight \`${OLD}\` is no longer what shop@staging runs (it runs \`${NEW}\` now), so it is not what proved healthy; nothing was changed. To promote anyway: \`/glidepath promote shop@prod --freight &lt;name&gt;\`.`);
    expect(promotions()).toEqual([]);

    await rig.store.update('shop', 'rel-k', (current) => ({ next: { ...current!.record, status: 'Superseded' }, result: null }));
    const late = await (await rig.click({ actionId: PROMOTE_ACTION_ID, value })).first();
    expect(said(late)).toBe(':x: Release `rel-k` is no longer in flight (Superseded) since the button was shown; nothing was changed.');
  });
});

describe('status', () => {
  it('shows Kargo Stages with current Freight, last Promotion and who made it, and Progressing after healthy (autoscaling) as no failure', async () => {
    const promoted = await (await rig.command('promote kargo-demo/prod-us --freight jolly-jaguar')).first();
    const name = promotions()[0]!.metadata.name!;
    expect(said(promoted)).toContain(name);
    world.store.patch(rt('Stage'), NS, 'prod-us', 'merge', {
      status: {
        freightHistory: [{ id: 'c1', items: { 'Warehouse/shop': { name: NEW } } }],
        lastPromotion: { name, freight: { name: NEW }, finishedAt: '2026-08-20T11:55:00Z', status: { phase: 'Succeeded' } },
        health: { status: 'Progressing' },
      },
    }, { subresource: 'status' });
    world.store.patch(rt('Freight'), NS, NEW, 'merge', { status: { verifiedIn: { 'prod-us': { verifiedAt: '2026-08-20T11:58:00Z' } } } }, { subresource: 'status' });

    const answer = await (await rig.command('status shop@prod')).first();
    const line = said(answer).split('\n').find((l) => l.includes('kargo-demo/prod-us'))!;
    // What the thread would say of the Stage: healthy since the Promotion, Progressing now (no release follows it: the Freight verified here says so).
    expect(line).toBe(
      `• Kargo \`kargo-demo/prod-us\` — Healthy: healthy since promotion · now Progressing · holds Freight \`${NEW}\` · ` +
        `last Promotion \`${name}\` Succeeded at 2026-08-20T11:55:00Z by <@${ALICE}> · health now Progressing; healthy at least once since that Promotion`,
    );
    const eu = said(answer).split('\n').find((l) => l.includes('kargo-demo/prod-eu'))!;
    expect(eu).toContain('never promoted');

    // A release (Complete, still following prod-us under that Promotion) latched: status gives the thread's latch, the Freight's word aside.
    world.store.patch(rt('Freight'), NS, NEW, 'merge', { status: { verifiedIn: null } }, { subresource: 'status' });
    const before = said(await (await rig.command('status shop@prod')).first()).split('\n').find((l) => l.includes('kargo-demo/prod-us'))!;
    expect(before).toContain('— Progressing: Stage Progressing, not yet healthy since the Promotion ·');
    const kargoTarget = target('prod-us', {
      ref: { kind: 'KargoStage', cluster: 'prod', namespace: NS, name: 'prod-us' },
      phase: 'Healthy',
      kargo: { promotion: { name, via: 'Promotion', phase: 'Succeeded' }, health: 'Progressing', verificationConfigured: false, targetAware: false, healthyAt: T0, doneAt: T0, judged: 'healthy' },
    });
    await rig.store.update('shop', 'rel-k2', () => ({ next: record({ pipeline: 'shop', releaseId: 'rel-k2', status: 'Complete', stages: [recordStage('staging', 'Healthy', [], { healthyAt: T0 }), recordStage('prod', 'Healthy', [kargoTarget], { healthyAt: T0 })] }), result: null }));
    const latched = said(await (await rig.command('status shop@prod')).first()).split('\n').find((l) => l.includes('kargo-demo/prod-us'))!;
    expect(latched).toContain('— Healthy: healthy since promotion · now Progressing ·');
    expect(latched).toMatch(/healthy at least once since that Promotion \(the release thread's latch\)$/);

    const none = await (await rig.command('status')).first();
    expect(said(none)).toBe('No release is in flight.');
    const unknown = await (await rig.command('status no-such-thing')).first();
    expect(said(unknown)).toContain('"no-such-thing" is neither a pipeline (checkout, shop) nor a known release id');
    expect(said(unknown)).toContain('*Usage:* `/glidepath status');
  });
});
