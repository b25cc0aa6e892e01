/**
 * The freeze gate seen from Slack (issue #23 item 5): a config freeze refuses an approval with
 * when it ends and nothing is patched; break-glass by a member of its groups with a reason goes
 * through, audited and announced in the release thread; without a reason or by a non-member it is
 * refused. An Argo CD AppProject deny syncWindow refuses a RollingSync approval; `manualSync: true`
 * lets it through. A recurring freeze holds a Kargo promote the same way. Real Bolt, Slack stand-in, Redis, client-node against the stand-in API server,
 * whose clock (2026-08-20T09:02:30Z, 11:02 in Berlin) the bot reads through `now`.
 */
import { afterEach, expect, it } from 'vitest';
import { configFileSchema, type ConfigFile } from '../../src/config/file.js';
import { createSlackClient } from '../../src/slack/client.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import type { StoredAuditEntry } from '../../src/audit/audit-log.js';
import { annotateRefresh, startArgoWorld, tree, REPO, type ArgoWorld } from '../kube/argo-world.js';
import { record, stage as recordStage } from '../slack/support/records.js';
import { eventually } from '../helpers/slack-harness.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { startKubeWorld } from '../kube/support.js';
import { ALICE, BOB, CHANNEL, commandsConfig, OPS_GROUP, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

let w: ArgoWorld | undefined;
let rig: CommandsRig | undefined;
afterEach(async () => {
  await rig?.close();
  await w?.stop();
  rig = undefined;
  w = undefined;
});

/** commandsConfig with one freeze over checkout@rolling, 10:00 to 16:00 Berlin time on the world's day. */
function frozenConfig(): ConfigFile {
  const base = commandsConfig();
  return configFileSchema.parse({
    ...base,
    freezes: [
      {
        name: 'black-friday',
        reason: 'no deploys during the sale',
        timeZone: 'Europe/Berlin',
        start: '2026-08-20T10:00',
        end: '2026-08-20T16:00',
        pipelines: ['checkout'],
        stages: ['glob:roll*'],
        breakGlass: { groups: [OPS_GROUP] },
      },
    ],
  });
}

async function start(config: ConfigFile): Promise<{ parentTs: string }> {
  w = await startArgoWorld({ staleCache: false, maxUpdate: [undefined, undefined, 0] });
  rig = await startCommandsRig({ clusters: w.clusters, now: () => w!.clock.now(), followTimeoutMs: 60_000, config });
  await w.clock.advance(150_000);
  await rig.store.update('checkout', 'rel-a', () => ({ next: record({ pipeline: 'checkout', releaseId: 'rel-a', stages: [recordStage('rolling', 'Waiting')] }), result: null }));
  const parent = await createSlackClient('xoxb-commands', rig.slack.apiUrl).chat.postMessage({ channel: CHANNEL, text: 'Release rel-a (checkout)' });
  await new ThreadStore(rig.redis, rig.keys, 3_600_000).saveParent('checkout', 'rel-a', { channel: CHANNEL, ts: parent.ts!, rendered: 'x', version: 1 });
  return { parentTs: parent.ts! };
}

const freezeGates = (entries: StoredAuditEntry[]) => entries.map((e) => [e.actor.slackUserId, e.result, (e.gates ?? []).find((g) => g.gate === 'freeze')]);
const applicationWrites = () => w!.server.writes.filter((x) => x.resource.startsWith('applications'));
const replies = (ts: string) => rig!.slack.transcript.find(CHANNEL, ts)?.replies.map((r) => r.text) ?? [];

it('a config freeze refuses an approval with when it ends; break-glass without a reason or by a non-member is refused; by a member with a reason it syncs, audited and announced', async () => {
  const { parentTs } = await start(frozenConfig());
  const sha = w!.git.resolve(REPO, 'main')!;

  const refused = await (await rig!.command('approve checkout@rolling')).first();
  expect(said(refused)).toBe(`:no_entry: Not allowed: frozen until 16:00 Europe/Berlin by freeze 'black-friday': no deploys during the sale; in an emergency ${OPS_GROUP} may override with \`/glidepath approve prod/argocd/checkout --break-glass "why"\``);
  const byOutsider = await (await rig!.command('approve checkout@rolling --break-glass "hotfix"', ALICE)).first();
  expect(said(byOutsider)).toContain(`only ${OPS_GROUP} may override freeze 'black-friday', so the break-glass to approve RollingSync step 3`);
  const noReason = await (await rig!.command('approve checkout@rolling --break-glass ""', BOB)).first();
  expect(said(noReason)).toContain('a break-glass override needs a reason');
  expect(applicationWrites()).toEqual([]);
  expect(w!.app('checkout-prod').operation).toBeUndefined();

  const broke = await (await rig!.command('approve checkout@rolling --break-glass "payments are down, this is the fix"', BOB)).first();
  expect(said(broke)).toBe(`:white_check_mark: approved RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)}: syncing checkout-prod`);
  expect(w!.app('checkout-prod').operation).toMatchObject({ sync: { revision: sha } });

  const entries = await rig!.auditEntries();
  expect(freezeGates(entries.slice().reverse())).toEqual([
    [ALICE, 'denied', expect.objectContaining({ allowed: false, reason: expect.stringMatching(/^frozen until 16:00 Europe\/Berlin/) })],
    [ALICE, 'denied', expect.objectContaining({ allowed: false })],
    [BOB, 'denied', expect.objectContaining({ allowed: false, reason: expect.stringContaining('needs a reason') })],
    [BOB, 'done', expect.objectContaining({ allowed: true, overridden: { by: BOB, reason: 'payments are down, this is the fix', freezes: ['black-friday'] } })],
  ]);
  expect(entries[0]).toMatchObject({ requestReason: 'payments are down, this is the fix', releaseId: 'rel-a' });

  const thread = await eventually(() => {
    const texts = replies(parentTs);
    return texts.some((t) => t.startsWith(':rotating_light:')) && texts.some((t) => t.includes('syncing checkout-prod')) ? texts : undefined;
  }, 'the break-glass line and the done line in the thread');
  expect(thread.find((t) => t.startsWith(':rotating_light:'))).toBe(`:rotating_light: <@${BOB}> broke glass over freeze 'black-friday' to approve RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)} (checkout@rolling): "payments are down, this is the fix"`);
  expect(thread[0]).toMatch(new RegExp(`^:no_entry: <@${ALICE}> tried to approve RollingSync step 3 .*: refused, frozen until 16:00 Europe/Berlin`));
});

it('an AppProject deny syncWindow refuses a RollingSync approval with when it ends, and nothing is synced; manualSync: true on the window lets it through; a refresh is held by it too', async () => {
  await start(commandsConfig());
  const sha = w!.git.resolve(REPO, 'main')!;
  const projects = w!.store.registry.byKind('AppProject');
  const window = { kind: 'deny', schedule: '0 10 * * *', duration: '8h', timeZone: 'Europe/Berlin', applications: ['checkout-prod'], description: 'release train' };
  w!.store.create(projects, 'argocd', { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: 'default' }, spec: { syncWindows: [window] } });

  const refused = await (await rig!.command('approve checkout@rolling')).first();
  expect(said(refused)).toBe(':no_entry: Not allowed: AppProject default holds a sync of checkout-prod: deny sync window `0 10 * * *` for 8h Europe/Berlin (release train) is open until 18:00 Europe/Berlin; Argo CD would refuse the sync. Wait, or ask the platform team to set manualSync: true on the window');
  expect(applicationWrites()).toEqual([]);
  expect(w!.app('checkout-prod').operation).toBeUndefined();

  const current = w!.store.get(projects, 'argocd', 'default')!;
  w!.store.update(projects, 'argocd', 'default', { ...current, spec: { syncWindows: [{ ...window, manualSync: true }] } });
  const approved = await (await rig!.command('approve checkout@rolling')).first();
  expect(said(approved)).toBe(`:white_check_mark: approved RollingSync step 3 of prod/argocd/checkout at ${sha.slice(0, 7)}: syncing checkout-prod`);
  expect((await rig!.auditEntries())[0]!.gates).toContainEqual(expect.objectContaining({ gate: 'freeze', allowed: true }));

  // Without manualSync again, a refresh of the stale children (after a new commit) is held by the same window, before any PATCH.
  const again = w!.store.get(projects, 'argocd', 'default')!;
  w!.store.update(projects, 'argocd', 'default', { ...again, spec: { syncWindows: [window] } });
  w!.git.commit(REPO, 'main', tree('1.29.0'));
  annotateRefresh(w!, 'dev');
  await w!.clock.advance(1000);
  const patchesBefore = applicationWrites().length;
  const refresh = await (await rig!.command('freshness prod/argocd/checkout --refresh')).first();
  expect(said(refresh)).toContain('Not allowed: AppProject default holds a sync of checkout-prod: deny sync window');
  expect(applicationWrites().length).toBe(patchesBefore);
});

it('a recurring freeze (cron in Berlin time) refuses a Kargo promote with its end; break-glass by a listed user with a reason creates the Promotion', async () => {
  const clock = new FakeClock('2026-08-20T12:00:00Z');
  const world = await startKubeWorld({ clock });
  const kargo = kargoObjects(world.store, 'kargo-demo');
  kargo.stage('dev', { direct: true });
  kargo.stage('staging', { stages: ['dev'] });
  kargo.freight('f0e1d2c3b4a5968778695a4b3c2d1e0f98765432', 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' } } });
  const config = configFileSchema.parse({
    ...commandsConfig(),
    // 13:00 to 15:00 in Berlin every day; the world's 12:00Z is 14:00 there.
    freezes: [{ name: 'lunch', reason: 'the on-call is at lunch', timeZone: 'Europe/Berlin', schedule: '0 13 * * *', duration: '2h', pipelines: ['glob:sh*'], breakGlass: { groups: [ALICE] } }],
  });
  const kargoRig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now(), config });
  try {
    const refused = await (await kargoRig.command('promote shop@staging')).first();
    expect(said(refused)).toBe(`\`staging\`: :no_entry: Not allowed: frozen until 15:00 Europe/Berlin by freeze 'lunch': the on-call is at lunch; in an emergency ${ALICE} may override with \`/glidepath promote shop@staging --break-glass "why"\``);
    expect(kargo.list('Promotion')).toEqual([]);
    const broke = await (await kargoRig.command('promote shop@staging --break-glass "customer demo in ten minutes"')).first();
    expect(said(broke)).toContain('created Promotion');
    expect(kargo.list('Promotion').map((p) => p.spec)).toEqual([expect.objectContaining({ stage: 'staging', freight: 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432' })]);
    expect((await kargoRig.auditEntries())[0]).toMatchObject({ action: 'promote', result: 'done', requestReason: 'customer demo in ten minutes', gates: expect.arrayContaining([expect.objectContaining({ gate: 'freeze', overridden: { by: ALICE, reason: 'customer demo in ten minutes', freezes: ['lunch'] } })]) });
  } finally {
    await kargoRig.close();
    await world.close();
  }
});
