/**
 * /glidepath promote chooses Kargo Stages in Kargo's own stageSelector grammar (exact, glob:,
 * regex:, ANDed with labels), whether the config names them or the person does: the confirmation
 * lists exactly the matched Stages, the click chooses again, an exact name promotes at once, and
 * a pattern that does not compile is answered with what was wrong and how to write it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configFileSchema } from '../../src/config/file.js';
import { PROMOTE_CONFIRM_ACTION_ID } from '../../src/slack/buttons.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { commandsConfig, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { kargoObjects, type KargoObjects } from '../helpers/kargo-objects.js';
import { eventually } from '../helpers/slack-harness.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';

const NS = 'kargo-demo';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
let world: KubeWorld;
let rig: CommandsRig;
let kargo: KargoObjects;

function withPatternStage() {
  const base = commandsConfig();
  const perms = { approve: [], abort: [], promote: ['U0ALICE'] };
  return configFileSchema.parse({
    ...base,
    pipelines: [
      ...base.pipelines,
      { name: 'fleet', channel: 'C0CHECKOUT', stages: [{ name: 'prod', cluster: 'prod', kargo: { project: NS, stage: 'glob:prod-*', selector: 'tier=prod' }, permissions: perms }] },
    ],
  });
}

const confirmButton = (blocks: unknown) => (blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!.elements![0]!;

beforeEach(async () => {
  const clock = new FakeClock('2026-08-20T12:00:00Z');
  world = await startKubeWorld({ clock });
  kargo = kargoObjects(world.store, NS);
  kargo.stage('staging', { direct: true }, { tier: 'prod' });
  kargo.stage('prod-eu', { stages: ['staging'] }, { tier: 'prod' });
  kargo.stage('prod-us', { stages: ['staging'] }, { tier: 'prod' });
  kargo.stage('prod-canary', { stages: ['staging'] }, { tier: 'canary' });
  kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { staging: { verifiedAt: '2026-08-20T11:50:00Z' } } });
  rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now(), config: withPatternStage() });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

describe('a configured stage named by pattern and labels', () => {
  it('confirms exactly the Stages whose name matches the glob and whose labels match, and chooses again at the click', async () => {
    const ask = await (await rig.command('promote fleet@prod --freight jolly-jaguar')).first();
    expect(said(ask)).toBe('Promote Freight jolly-jaguar to 2 Stages in kargo-demo: `prod-eu`, `prod-us`?');
    expect(kargo.list('Promotion')).toEqual([]);

    // prod-us stops being tier=prod before the click: it is no longer matched, and is named.
    world.store.mutate(world.store.registry.byKind('Stage', 'kargo.akuity.io'), NS, 'prod-us', (s) => void (s.metadata.labels = { tier: 'canary' }));
    const button = confirmButton(ask.body.blocks);
    const clicked = await rig.click({ actionId: PROMOTE_CONFIRM_ACTION_ID, value: button.value, ephemeral: true, messageText: said(ask), messageBlocks: ask.body.blocks as unknown[] });
    const done = await eventually(() => clicked.responses().find((r) => r.body.response_type === 'in_channel'), 'the outcome');
    expect(kargo.list('Promotion').map((p) => p.spec.stage)).toEqual(['prod-eu']);
    expect(said(done)).toContain('`prod-eu`: :white_check_mark: created Promotion');
    expect(said(done)).toContain('no longer matched, not promoted: `prod-us`');
  });
});

describe("a person's own choice, in the same grammar", () => {
  it('--stage regex: matches anywhere unless anchored, ANDed with --selector', async () => {
    const loose = await (await rig.command('promote shop@prod --stage regex:-.?u')).first();
    expect(said(loose)).toBe('Promote the newest available Freight to 2 Stages in kargo-demo: `prod-eu`, `prod-us`?');
    const anded = await (await rig.command('promote shop@prod --stage regex:^prod- --selector tier=canary')).first();
    expect(said(anded)).toBe('Promote the newest available Freight to 1 Stage in kargo-demo: `prod-canary`?');
    expect(JSON.parse(confirmButton(anded.body.blocks).value)).toMatchObject({ stage: 'regex:^prod-', sel: 'tier=canary', stages: ['prod-canary'] });
    const none = await (await rig.command('promote kargo-demo/glob:dev-*')).first();
    expect(said(none)).toBe(':information_source: no Stage matches stage glob:dev-* in project kargo-demo; nothing to promote');
    expect(kargo.list('Promotion')).toEqual([]);
  });

  it('project/glob:… and --glob (the older spelling of --stage glob:…) confirm first; an exact name promotes at once', async () => {
    const byProject = await (await rig.command('promote kargo-demo/glob:prod-{eu,us} --freight jolly-jaguar')).first();
    expect(said(byProject)).toBe('Promote Freight jolly-jaguar to 2 Stages in kargo-demo: `prod-eu`, `prod-us`?');
    const byGlob = await (await rig.command('promote shop@prod --glob prod-?? --freight jolly-jaguar')).first();
    expect(JSON.parse(confirmButton(byGlob.body.blocks).value)).toMatchObject({ stage: 'glob:prod-??', stages: ['prod-eu', 'prod-us'] });
    expect(kargo.list('Promotion')).toEqual([]);

    const exact = await (await rig.command('promote shop@prod --stage prod-us --freight jolly-jaguar')).first();
    expect(said(exact)).toMatch(/^`prod-us`: :white_check_mark: created Promotion prod-us\./);
    expect(kargo.list('Promotion').map((p) => p.spec.stage)).toEqual(['prod-us']);
  });

  it('a pattern that does not compile is answered with what was wrong and how to write it; nothing is listed or promoted', async () => {
    const glob = await (await rig.command('promote shop@prod --stage glob:prod-[eu')).first();
    expect(said(glob)).toContain('"glob:prod-[eu": a character class "[…]" is never closed with "]"');
    expect(said(glob)).toContain('write an exact Stage name (prod-eu), glob:&lt;pattern&gt; (glob:prod-*, glob:prod-{eu,us}; the whole name must match) or regex:&lt;RE2&gt; (regex:^prod-; matches anywhere unless anchored)');
    const regex = await (await rig.command('promote kargo-demo/regex:^prod-(?!eu)')).first();
    expect(said(regex)).toContain('lookahead and lookbehind');
    const prefix = await (await rig.command('promote shop@prod --stage re:prod')).first();
    expect(said(prefix)).toContain('"re:" is not a pattern Kargo knows');
    const both = await (await rig.command('promote kargo-demo/prod-eu --stage prod-us')).first();
    expect(said(both)).toContain('kargo-demo/prod-eu names the Stages already');
    expect(kargo.list('Promotion')).toEqual([]);
  });
});
