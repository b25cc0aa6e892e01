/**
 * Target-aware Kargo Stages (Kargo main / 1.12, `spec.targets`) promoted from Slack: through
 * Kargo's API (the stand-in over real HTTP, tokens mapped to the stand-in cluster's users and its
 * RBAC), followed through the Stage's status to the end; classic Stages still get a Promotion
 * resource; the simulator refuses a Promotion created directly for a target-aware Stage; a cluster
 * without Kargo's API, and a token without the promote verb, are refusals that say what to do.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configFileSchema } from '../../src/config/file.js';
import { KubeActionError } from '../../src/kube/errors.js';
import { PROMOTIONS } from '../../src/kube/resources.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { KargoApiStandIn } from '../../sandbox/kube/kargo-api-server.js';
import { ALICE, CHANNEL, commandsConfig, said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { kargoObjects, type KargoObjects } from '../helpers/kargo-objects.js';
import { eventually } from '../helpers/slack-harness.js';
import { advanceClockUntil } from '../helpers/wait.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';

const NS = 'kargo-demo';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
let clock: FakeClock;
let world: KubeWorld;
let rig: CommandsRig;
let kargo: KargoObjects;
let api: KargoApiStandIn;

function config() {
  const base = commandsConfig();
  const perms = { approve: [], abort: [], promote: [ALICE] };
  const at = (name: string, cluster: string, stage: string) => ({ name, cluster, kargo: { project: NS, stage }, permissions: perms });
  return configFileSchema.parse({
    ...base,
    pipelines: [
      ...base.pipelines,
      { name: 'fleet', channel: CHANNEL, stages: [at('classic', 'prod', 'staging'), at('targets', 'prod', 'fleet'), at('denied', 'prod-no-promote', 'fleet'), at('no-api', 'prod-no-status', 'fleet')] },
    ],
  });
}

function target(name: string, labels: Record<string, string>): void {
  world.store.create(world.store.registry.byKind('Target', 'kargo.akuity.io'), NS, { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Target', metadata: { name, labels }, spec: { params: { cluster: name } } });
}

const runUntil = (done: () => boolean, what: string): Promise<void> => advanceClockUntil(clock, done, what);

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T12:00:00Z');
  world = await startKubeWorld({ clock, kargoApi: true, controllers: { kargo: { stepDurationMs: 1000, faults: { fail: (p) => (p.spec.target === 'us-1' && p.spec.freight === 'bad0000000000000000000000000000000000000' ? { phase: 'Failed', message: 'step-1: git push refused' } : undefined) } } } });
  api = world.standIn.kargoApi!;
  kargo = kargoObjects(world.store, NS);
  kargo.stage('staging', { direct: true });
  kargo.stage('fleet', { stages: ['staging'] }, {}, { targets: { selectors: [{ matchLabels: { fleet: 'shop' } }] } });
  target('eu-1', { fleet: 'shop' });
  target('us-1', { fleet: 'shop' });
  target('lab', { fleet: 'lab' });
  kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', { verifiedIn: { staging: { verifiedAt: '2026-08-20T11:50:00Z' } } });
  rig = await startCommandsRig({ clusters: world.clusters, now: () => clock.now(), config: config() });
});
afterEach(async () => {
  await rig.close();
  await world.close();
});

describe('a target-aware Stage', () => {
  it('is promoted through Kargo\'s API (one POST, the Freight by name, Glidepath\'s token) and its PromotionRequest is followed to Succeeded in a thread', async () => {
    const answer = await (await rig.command('promote fleet@targets --freight jolly-jaguar')).first();
    const requests = kargo.list('PromotionRequest');
    expect(requests).toHaveLength(1);
    const name = requests[0]!.metadata.name!;
    expect(name).toMatch(new RegExp(`^fleet\\.[0-9a-hjkmnp-tv-z]{26}\\.${NEW.slice(0, 7)}$`));
    expect(said(answer)).toBe(`\`fleet\`: :white_check_mark: created PromotionRequest ${name} of jolly-jaguar (Freight ${NEW.slice(0, 7)}) to prod/kargo-demo/fleet through Kargo's API (the Stage selects Targets; Kargo promotes to its 2 Targets)`);
    expect(api.received).toEqual([{ method: 'POST', path: '/v1beta1/projects/kargo-demo/stages/fleet/promotions', token: 'glidepath-token', body: { freight: NEW }, status: 201 }]);
    expect(requests[0]!.spec).toEqual({ stage: 'fleet', freight: NEW, targets: [{ name: 'eu-1' }, { name: 'us-1' }] });
    expect(requests[0]!.metadata.annotations?.['kargo.akuity.io/create-actor']).toBe('kubernetes:glidepath');

    const header = await eventually(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes(`PromotionRequest \`${name}\``)), 'the follow message');
    expect(header.text).toBe(`:arrow_forward: PromotionRequest \`${name}\` to \`fleet\` (kargo-demo, through Kargo's API): following its phase`);
    const statusLine = async () => said(await (await rig.command('status fleet@targets')).first()).split('\n').find((l) => l.includes('kargo-demo/fleet'))!;
    // Status says what the thread would, and names the PromotionRequest (not the Stage's lastPromotion) with its phase and Freight.
    expect(await statusLine()).toBe(
      `• Kargo \`kargo-demo/fleet\` — Progressing: PromotionRequest Running · holds Freight none · current PromotionRequest \`${name}\` Running of Freight \`${NEW}\` by <@${ALICE}> · health now Unknown; not healthy since that PromotionRequest`,
    );
    await runUntil(() => world.store.get(world.store.registry.byKind('PromotionRequest', 'kargo.akuity.io'), NS, name).status?.phase === 'Succeeded', 'the PromotionRequest to succeed');
    expect(await statusLine()).toBe(
      `• Kargo \`kargo-demo/fleet\` — Progressing: Stage Unknown, not yet healthy since the PromotionRequest · holds Freight \`${NEW}\` · last PromotionRequest \`${name}\` Succeeded of Freight \`${NEW}\` at 2026-08-20T12:00:02Z by <@${ALICE}> · health now Unknown; not healthy since that PromotionRequest`,
    );
    const replies = () => rig.slack.transcript.find(CHANNEL, header.ts)!.replies.map((r) => r.text);
    await eventually(() => replies().some((t) => t.includes('is Succeeded')) || undefined, 'the end of the PromotionRequest in the thread');
    expect(replies().at(-1)).toBe(`:white_check_mark: \`${name}\` is Succeeded`);
    expect(replies().some((t) => t === `:hourglass_flowing_sand: \`${name}\` is Running`)).toBe(true);

    // Kargo fanned out one child Promotion per Target, named after it; Glidepath created none itself.
    const children = kargo.list('Promotion').map((p) => p.metadata.name!).sort();
    expect(children).toHaveLength(2);
    expect(children[0]).toMatch(/^fleet\.eu-1\.[0-9a-hjkmnp-tv-z]{26}\.f0e1d2c$/);
    expect(children[1]).toMatch(/^fleet\.us-1\./);
    expect(kargo.list('Stage').find((s) => s.metadata.name === 'fleet')!.status).toMatchObject({ lastPromotionRequest: { name, phase: 'Succeeded', freight: { name: NEW } } });
    expect((await rig.auditEntries())[0]).toMatchObject({ action: 'promote', result: 'done', target: 'prod/kargo-demo/fleet', after: { promotionRequest: name, freight: NEW } });
  });

  it('a PromotionRequest whose Target fails is followed to Failed', async () => {
    kargo.freight('bad0000000000000000000000000000000000000', 'bad-badger', '2026-08-20T11:40:00Z', { verifiedIn: { staging: { verifiedAt: '2026-08-20T11:55:00Z' } } });
    await (await rig.command('promote fleet@targets --freight bad-badger')).first();
    const name = kargo.list('PromotionRequest')[0]!.metadata.name!;
    const header = await eventually(() => rig.slack.transcript.messages(CHANNEL).find((m) => m.text.includes(name)), 'the follow message');
    await runUntil(() => kargo.list('PromotionRequest')[0]!.status?.phase === 'Failed', 'the PromotionRequest to fail');
    expect(kargo.list('PromotionRequest')[0]!.status).toMatchObject({ phase: 'Failed', summary: { succeeded: 1, failed: 1 } });
    await eventually(() => rig.slack.transcript.find(CHANNEL, header.ts)!.replies.find((r) => r.text === `:x: \`${name}\` is Failed`), 'Failed in the thread');
  });

  it('a cluster without Kargo\'s API configured, or a token without the promote verb, is refused with what to do; nothing is created', async () => {
    const noApi = await (await rig.command('promote fleet@no-api --freight jolly-jaguar')).first();
    expect(said(noApi)).toBe(
      "`fleet`: :x: Stage fleet in prod-no-status/kargo-demo selects Targets (spec.targets): Kargo refuses a Promotion created for it and promotes it only through Kargo's API, which is not configured for cluster prod-no-status; nothing was changed. " +
        'Set clusters[].kargoApi.url for prod-no-status in the config and its token in KARGO_API_TOKENS (prod-no-status=<token of a role with the promote verb on its Stages>)',
    );
    expect(api.received).toEqual([]);

    const denied = await (await rig.command('promote fleet@denied --freight jolly-jaguar')).first();
    expect(said(denied)).toBe(
      '`fleet`: :x: Glidepath\'s Kargo token may not promote Stage fleet in prod-no-promote/kargo-demo (needs the promote verb on stages.kargo.akuity.io/fleet); nothing was changed. Kargo said: stages.kargo.akuity.io "fleet" is forbidden: promote is not permitted',
    );
    expect(api.received.map((r) => [r.token, r.status])).toEqual([['no-promote-token', 403]]);
    expect(kargo.list('PromotionRequest')).toEqual([]);
    expect(kargo.list('Promotion')).toEqual([]);
    expect((await rig.auditEntries()).map((e) => [e.target, e.result])).toEqual([
      ['prod-no-promote/kargo-demo/fleet', 'failed'],
      ['prod-no-status/kargo-demo/fleet', 'failed'],
    ]);
  });

  it('a 5xx from Kargo\'s API is an error that says the outcome is unknown', async () => {
    api.failWith = { status: 503, error: 'upstream connect error' };
    const answer = await (await rig.command('promote fleet@targets --freight jolly-jaguar')).first();
    expect(said(answer)).toBe(`\`fleet\`: :x: Kargo's API (${api.url}) of cluster prod failed to promote Stage fleet in kargo-demo (HTTP 503: upstream connect error); the promotion may or may not have been created, look before retrying`);
  });

  it('the simulator refuses a Promotion created directly for it, as Kargo\'s webhook does', async () => {
    const create = (spec: Record<string, unknown>) => world.clusters.api('prod').create(PROMOTIONS, NS, { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', metadata: { generateName: 'promo-', namespace: NS }, spec });
    const err = await create({ stage: 'fleet', freight: NEW, steps: [{ uses: 'noop' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeActionError);
    expect((err as KubeActionError).message).toContain('Stage "fleet" selects Targets; it is promoted to with a PromotionRequest rather than a Promotion');
    const named = await create({ stage: 'staging', freight: NEW, target: 'eu-1', steps: [{ uses: 'noop' }] }).catch((e: unknown) => e);
    expect((named as KubeActionError).message).toContain('a Promotion may name a Target only when created by a PromotionRequest');
    expect(kargo.list('Promotion')).toEqual([]);
  });
});

describe('a classic Stage', () => {
  it('still gets a Promotion resource through the Kubernetes API, and Kargo\'s API is not called', async () => {
    const answer = await (await rig.command('promote fleet@classic --freight jolly-jaguar')).first();
    const created = kargo.list('Promotion');
    expect(created.map((p) => p.spec.stage)).toEqual(['staging']);
    expect(said(answer)).toBe(`\`staging\`: :white_check_mark: created Promotion ${created[0]!.metadata.name} of jolly-jaguar (Freight ${NEW.slice(0, 7)}) to prod/kargo-demo/staging`);
    expect(api.received).toEqual([]);
    expect(kargo.list('PromotionRequest')).toEqual([]);
  });
});
