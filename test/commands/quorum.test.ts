/**
 * Quorum on a canary step (`approvals: { required: 2, from: [...], excludeAuthor: true }`), from
 * the Approve button: the release's author (as CI announced them) is refused with why, someone
 * outside `from` does not count, each approval shows as progress in the release thread, the
 * second distinct approver's click is the one that sends the PATCH, and an approval of an older
 * pod hash does not count toward the new one; on a Kargo stage the promote of one Freight waits for
 * its quorum the same way. Real Bolt, Slack stand-in, Redis, client-node
 * against the stand-in API server with its Rollouts controller on a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { createSlackClient } from '../../src/slack/client.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import { APPROVE_ACTION_ID, encodeButtonValue } from '../../src/slack/buttons.js';
import { record, stage as recordStage, target } from '../slack/support/records.js';
import { eventually } from '../helpers/slack-harness.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';
import { ALICE, BOB, CHANNEL, MALLORY, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

const CAROL = 'U0CAROL';

/** One stage whose approvals need two of Alice, Bob and Carol, never the release's author. */
function quorumConfig(): ConfigFile {
  return configFileSchema.parse({
    clusters: [{ name: 'prod' }],
    pipelines: [
      {
        name: 'checkout',
        channel: CHANNEL,
        stages: [
          {
            name: 'prod',
            cluster: 'prod',
            rollouts: { namespace: 'shop', selector: 'app.kubernetes.io/name=checkout' },
            permissions: { approve: [ALICE, BOB, CAROL, MALLORY] },
            approvals: { required: 2, from: [ALICE, BOB, CAROL], excludeAuthor: true },
          },
        ],
      },
      {
        name: 'shop',
        channel: CHANNEL,
        stages: [{ name: 'staging', cluster: 'prod', kargo: { project: 'kargo-demo', stage: 'staging' }, permissions: { promote: [BOB, CAROL] }, approvals: { required: 2 } }],
      },
    ],
  });
}

let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;
let threadTs: string;

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T09:00:00Z');
  world = await startKubeWorld({ clock, namespaces: ['shop', 'argocd', 'kargo-demo'], controllers: { rollouts: { podReadyMs: 5000 } } });
  rig = await startCommandsRig({ clusters: world.clusters, config: quorumConfig() });
  // The release CI announced as Alice's change, with its thread.
  const release = record({ releaseId: 'rel-1', status: 'Paused', authorSlackId: ALICE, stages: [recordStage('prod', 'Paused', [target('checkout', { phase: 'Paused' })])] });
  await rig.store.update('checkout', 'rel-1', () => ({ next: release, result: null }));
  const parent = await createSlackClient('xoxb-commands', rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: 'Release rel-1 (checkout)' });
  threadTs = parent.ts!;
  await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('checkout', 'rel-1', { channel: CHANNEL, ts: threadTs, rendered: 'x', version: 1 });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

const rt = () => world.store.registry.byKind('Rollout', 'argoproj.io');
const live = () => world.store.get(rt(), 'shop', 'checkout');
const rolloutWrites = () => world.server.writes.filter((w) => w.resource.startsWith('rollouts') && w.name === 'checkout');
const threadLines = () => (rig.slack.transcript.find(CHANNEL, threadTs)?.replies ?? []).map((r) => r.text);

/** A canary of `image`, paused at its indefinite pause (step index 1): the button's state. */
async function pausedAt(image: string): Promise<{ g: number; h: string; s: number }> {
  world.store.mutate(rt(), 'shop', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = image));
  await clock.advance(6000);
  const r = live();
  expect(r.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
  return { g: r.metadata.generation!, h: r.status.currentPodHash, s: 1 };
}

async function startCanary(): Promise<{ g: number; h: string; s: number }> {
  world.store.create(rt(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
  await clock.advance(0);
  return pausedAt('registry.example.com/shop/checkout:1.29.0');
}

const approveValue = (at: { g: number; h: string; s: number }) => encodeButtonValue({ v: 1, p: 'checkout', r: 'rel-1', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', ...at });

async function clickApprove(at: { g: number; h: string; s: number }, user: string): Promise<string> {
  return said(await (await rig.click({ actionId: APPROVE_ACTION_ID, value: approveValue(at), user })).first());
}

describe('quorum: approvals { required: 2, from, excludeAuthor }', () => {
  it('2 of 3 with the author excluded: the author and an outsider are refused with why, the first approval is progress in the thread, the second distinct one sends the PATCH', async () => {
    const at = await startCanary();

    const byAuthor = await clickApprove(at, ALICE);
    expect(byAuthor).toBe(':no_entry: Not allowed: you wrote release rel-1 (its CI announcement says so), and checkout@prod leaves its author and merger out of its approvals (approvals.excludeAuthor); ask someone else to approve');
    const byOutsider = await clickApprove(at, MALLORY);
    expect(byOutsider).toBe(`:no_entry: Not allowed: your approval does not count toward checkout@prod: its approvals.from counts only ${ALICE}, ${BOB}, ${CAROL}; ask one of them to approve`);
    expect(rolloutWrites()).toEqual([]);

    const first = await clickApprove(at, BOB);
    // The clicked message says it, with who clicked, and keeps its buttons for the next approver.
    expect(first).toBe(`:hourglass_flowing_sand: approval 1 of 2: <@${BOB}> to approve step 2 of prod/shop/checkout; checkout@prod needs 1 more approval of this same state, from a different person (by <@${BOB}>)`);
    expect(await clickApprove(at, BOB)).toMatch(/^:no_entry: Not allowed: you already approved this \(approval 1 of 2: <@U0BOB>\)/);
    expect(rolloutWrites()).toEqual([]);
    expect(live().status.pauseConditions).toHaveLength(1);

    const second = await clickApprove(at, CAROL);
    expect(second).toBe(`:white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on (approval 2 of 2: <@${BOB}>, <@${CAROL}>) (by <@${CAROL}>)`);
    expect(rolloutWrites().map((w) => [w.verb, w.resource])).toEqual([['patch', 'rollouts/status']]);
    expect(live().status.pauseConditions ?? []).toHaveLength(0);

    const lines = await eventually(() => (threadLines().length >= 4 ? threadLines() : undefined), 'four lines in the release thread');
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^:no_entry: <@${ALICE}> tried to approve step 2 of prod/shop/checkout \\(checkout@prod\\): refused, you wrote release rel-1`)),
      expect.stringMatching(new RegExp(`^:no_entry: <@${MALLORY}> tried to approve step 2 of prod/shop/checkout \\(checkout@prod\\): refused, your approval does not count`)),
      `:hourglass_flowing_sand: approval 1 of 2: <@${BOB}> to approve step 2 of prod/shop/checkout; checkout@prod needs 1 more approval of this same state, from a different person`,
      `:white_check_mark: <@${CAROL}> (approval 2 of 2: <@${BOB}>, <@${CAROL}>): approved step 2 of prod/shop/checkout: the canary moves on`,
    ]);
    const results = (await rig.auditEntries()).map((e) => [e.actor.slackUserId, e.result, e.gates?.find((g) => g.gate === 'approvals')?.allowed]);
    expect(results).toEqual([
      [CAROL, 'done', true],
      [BOB, 'denied', false],
      [BOB, 'allowed', false],
      [MALLORY, 'denied', false],
      [ALICE, 'denied', false],
    ]);
  });

  it('an approval lapses when the pod hash changes: after a new pod hash the first approval no longer counts', async () => {
    const before = await startCanary();
    expect(await clickApprove(before, BOB)).toMatch(/^:hourglass_flowing_sand: approval 1 of 2: <@U0BOB> /);

    // A newer image: a new pod hash, paused again at the same step.
    const after = await pausedAt('registry.example.com/shop/checkout:1.30.0');
    expect(after.h).not.toBe(before.h);
    const carol = await clickApprove(after, CAROL);
    expect(carol).toBe(`:hourglass_flowing_sand: approval 1 of 2: <@${CAROL}> to approve step 2 of prod/shop/checkout; checkout@prod needs 1 more approval of this same state, from a different person (by <@${CAROL}>)`);
    expect(rolloutWrites()).toEqual([]);
    expect(live().status.pauseConditions).toHaveLength(1);

    // Bob approves what is there now: his second approval, of the new state, meets the quorum.
    expect(await clickApprove(after, BOB)).toBe(`:white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on (approval 2 of 2: <@${CAROL}>, <@${BOB}>) (by <@${BOB}>)`);
    expect(rolloutWrites().map((w) => [w.verb, w.resource])).toEqual([['patch', 'rollouts/status']]);
  });

  it('whoever merged the release is left out too', async () => {
    const at = await startCanary();
    await rig.store.update('checkout', 'rel-1', (current) => ({ next: { ...current!.record, mergedBySlackId: CAROL }, result: null }));
    expect(await clickApprove(at, CAROL)).toBe(':no_entry: Not allowed: you merged release rel-1 (its CI announcement says so), and checkout@prod leaves its author and merger out of its approvals (approvals.excludeAuthor); ask someone else to approve');
    expect(await clickApprove(at, BOB)).toMatch(/^:hourglass_flowing_sand: approval 1 of 2: <@U0BOB> /);
    expect(rolloutWrites()).toEqual([]);
  });

  it('two approvals at once (two replicas, two clicks): exactly one meets the quorum and acts; a later click is told it was approved already', async () => {
    const at = await startCanary();
    const answers = await Promise.all([clickApprove(at, BOB), clickApprove(at, CAROL)]);
    const done = answers.filter((a) => a.startsWith(':white_check_mark: approved step 2 of prod/shop/checkout: the canary moves on (approval 2 of 2: '));
    const counted = answers.filter((a) => a.startsWith(':hourglass_flowing_sand: approval 1 of 2: '));
    expect([done.length, counted.length]).toEqual([1, 1]);
    expect(rolloutWrites().map((w) => [w.verb, w.resource])).toEqual([['patch', 'rollouts/status']]);
    expect(await clickApprove(at, BOB)).toMatch(/^:no_entry: Not allowed: this was approved already \(approval 2 of 2: <@U0(BOB|CAROL)>, <@U0(BOB|CAROL)>\) and acted on; nothing more to do$/);
    expect(rolloutWrites()).toHaveLength(1);
  });
});

describe('quorum on a Kargo stage: a promote of one Freight', () => {
  const FREIGHT = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
  const promotions = () => world.server.writes.filter((w) => w.resource === 'promotions');

  it('waits for two different people promoting the same Freight; the second creates the Promotion', async () => {
    const kargo = kargoObjects(world.store, 'kargo-demo');
    kargo.stage('dev', { direct: true });
    kargo.stage('staging', { stages: ['dev'] });
    kargo.freight(FREIGHT, 'jolly-jaguar', '2026-08-20T08:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T08:40:00Z' } } });

    const first = said(await (await rig.command(`promote shop@staging --freight ${FREIGHT}`, BOB)).first());
    expect(first).toContain(`:hourglass_flowing_sand: approval 1 of 2: <@${BOB}> to promote Freight ${FREIGHT} to prod/kargo-demo/staging; shop@staging needs 1 more approval of this same state, from a different person`);
    expect(promotions()).toEqual([]);
    const second = said(await (await rig.command(`promote shop@staging --freight ${FREIGHT}`, CAROL)).first());
    expect(second).toMatch(new RegExp(`created Promotion \\S+ of jolly-jaguar \\(Freight ${FREIGHT.slice(0, 7)}\\) to prod/kargo-demo/staging \\(approval 2 of 2: <@${BOB}>, <@${CAROL}>\\)`));
    expect(promotions().map((w) => w.verb)).toEqual(['create']);
  });
});
