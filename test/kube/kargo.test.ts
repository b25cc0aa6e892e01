import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileLabelSelector } from '../../src/model/label-selector.js';
import { compileStageName } from '../../src/model/kargo-stage-selector.js';
import { availableFreight, followPromotion, promote, selectStages, stageHealth } from '../../src/kube/kargo.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { KargoController } from '../../sandbox/kube/controllers/kargo.js';
import { kargoObjects, type KargoObjects } from '../helpers/kargo-objects.js';
import { advanceClockUntil } from '../helpers/wait.js';
import { completed, failure, refusal, startKubeWorld, type KubeWorld } from './support.js';

const NS = 'kargo-demo';
let clock: FakeClock;
let world: KubeWorld;
let kargo: KargoObjects;

const rt = (kind: string) => world.store.registry.byKind(kind, 'kargo.akuity.io');

const OLD = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';

beforeEach(async () => {
  clock = new FakeClock('2026-08-20T12:00:00Z');
  world = await startKubeWorld({ clock });
  kargo = kargoObjects(world.store, NS);
  kargo.stage('dev', { direct: true }, { tier: 'pre' });
  kargo.stage('staging', { stages: ['dev'] }, { tier: 'pre' });
  kargo.stage('prod-eu', { stages: ['staging'], requiredSoakTime: '1h' }, { tier: 'prod' });
  kargo.stage('prod-us', { stages: ['staging'] }, { tier: 'prod' });
  kargo.controlFlowStage('gate', { stages: ['dev'] });
  kargo.freight(OLD, 'wonky-wombat', '2026-08-19T10:00:00Z', {
    verifiedIn: { dev: { verifiedAt: '2026-08-19T10:30:00Z' }, staging: { verifiedAt: '2026-08-19T11:00:00Z' } },
    currentlyIn: { staging: { since: '2026-08-19T10:45:00Z' } },
  });
  kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z', {
    verifiedIn: { dev: { verifiedAt: '2026-08-20T11:40:00Z' }, staging: { verifiedAt: '2026-08-20T11:50:00Z' } },
    currentlyIn: { staging: { since: '2026-08-20T11:45:00Z' } },
  });
});
afterEach(() => world.close());

const api = () => world.clusters.api('prod');
const now = () => clock.now();

describe('Kargo', () => {
  it('selects Stages by Kargo\'s stageSelector grammar: labels sent to the API server, name patterns matched as Kargo does, ANDed', async () => {
    const sent: (string | undefined)[] = [];
    world.server.onRequest = (r) => void (r.resource === 'stages' && r.verb === 'list' && sent.push(r.labelSelector));
    const select = async (stage?: string, labels?: string) =>
      (await selectStages(api(), { project: NS, ...(stage ? { name: compileStageName(stage) } : {}), ...(labels ? { labels: compileLabelSelector(labels) } : {}) })).map((s) => s.metadata.name);
    expect(await select(undefined, 'tier=prod')).toEqual(['prod-eu', 'prod-us']);
    expect(await select('glob:prod-*')).toEqual(['prod-eu', 'prod-us']);
    expect(await select('glob:*-?s')).toEqual(['prod-us']);
    expect(await select('glob:{dev,staging}')).toEqual(['dev', 'staging']);
    expect(await select('regex:ev')).toEqual(['dev']);
    expect(await select('regex:^prod-.u$', 'tier=prod')).toEqual(['prod-eu']);
    expect(await select('staging', 'tier=prod')).toEqual([]);
    expect(sent).toEqual(['tier=prod', undefined, undefined, undefined, undefined, 'tier=prod', 'tier=prod']);
  });

  it('availableFreight: the newest Freight the Stage may take, by verification upstream, soak, or straight from the Warehouse', async () => {
    expect((await availableFreight(api(), NS, 'dev', { now })).available.map((f) => [f.freight.alias, f.reason])).toEqual([
      ['jolly-jaguar', 'comes directly from Warehouse shop'],
      ['wonky-wombat', 'comes directly from Warehouse shop'],
    ]);
    expect((await availableFreight(api(), NS, 'prod-us', { now })).newest?.metadata.name).toBe(NEW);
    // prod-eu needs an hour of soak in staging: only the old Freight has it.
    const eu = await availableFreight(api(), NS, 'prod-eu', { now });
    expect(eu.available.map((f) => [f.freight.alias, f.reason])).toEqual([['wonky-wombat', 'verified in staging']]);
  });

  it('promote creates a Promotion and returns the name Kargo gave it, not the placeholder', async () => {
    const result = await completed(promote(api(), NS, 'prod-us', 'jolly-jaguar', { now }));
    expect(result.name).toMatch(new RegExp(`^prod-us\\.[0-9a-hjkmnp-tv-z]{26}\\.${NEW.slice(0, 7)}$`));
    expect(result.name).not.toContain('promo-');
    expect(result).toMatchObject({ via: 'promotion', promotion: { spec: { stage: 'prod-us', freight: NEW } } });
    expect(result.availability.reason).toBe('verified in staging');
    expect(world.store.get(rt('Promotion'), NS, result.name).metadata.labels).toMatchObject({ 'kargo.akuity.io/stage': 'prod-us' });
  });

  it('promote refuses Freight the Stage may not take, with the reason, and creates nothing', async () => {
    const soak = await refusal(promote(api(), NS, 'prod-eu', NEW, { now }));
    expect(soak.kind).toBe('refused');
    expect(soak.reason).toBe(`jolly-jaguar (Freight ${NEW.slice(0, 7)}) is not available to Stage prod-eu: verified in staging but soaked 15m of the required 1h; nothing was changed`);
    world.store.patch(rt('Freight'), NS, NEW, 'merge', { status: { verifiedIn: { staging: null } } }, { subresource: 'status' });
    const unverified = await refusal(promote(api(), NS, 'prod-us', NEW, { now }));
    expect(unverified.reason).toContain('is not available to Stage prod-us: not verified in staging; nothing was changed');
    const control = await refusal(promote(api(), NS, 'gate', NEW, { now }));
    expect(control.reason).toContain('Stage gate in prod/kargo-demo has no promotion steps');
    const missing = await failure(promote(api(), NS, 'prod-us', 'no-such-freight', { now }));
    expect(missing.kind).toBe('not-found');
    expect(kargo.list('Promotion')).toEqual([]);
    expect(world.server.requestCounts.get('create promotions')).toBeUndefined();
  });

  it("Kargo's webhook has the last word: a Promotion it denies is reported with its reason", async () => {
    // Glidepath's check passes, then the Freight's verification in dev is withdrawn before the create lands.
    world.server.onRequest = (req) => {
      if (req.verb === 'create' && req.resource === 'promotions') {
        world.store.patch(rt('Freight'), NS, OLD, 'merge', { status: { verifiedIn: { dev: null } } }, { subresource: 'status' });
      }
    };
    const denied = await failure(promote(api(), NS, 'staging', OLD, { now }));
    expect(denied.kind).toBe('invalid');
    expect(denied.message).toBe(
      `Kargo refused to promote wonky-wombat (Freight ${OLD.slice(0, 7)}) to Stage staging in prod/kargo-demo: admission webhook "promotion.kargo.akuity.io" denied the request: Freight is not available to this Stage; nothing was changed`,
    );
    expect(kargo.list('Promotion')).toEqual([]);
  });

  it('without the custom verb `promote` on stages, Kargo refuses and the RBAC gap is named', async () => {
    const err = await failure(promote(world.clusters.api('prod-no-promote'), NS, 'prod-us', NEW, { now }));
    expect(err.kind).toBe('forbidden');
    expect(err.message).toBe("Glidepath's service account may not promote stages in prod-no-promote/kargo-demo (Stage prod-us); nothing was changed: add the rule from deploy/rbac/glidepath-clusterrole.yaml");
  });

  it('followPromotion follows the Kargo controller on a watch until a terminal phase', async () => {
    const kargo = new KargoController({ store: world.store, clock, stepDurationMs: 1000 }).start();
    try {
      const { name } = await completed(promote(api(), NS, 'dev', NEW, { now }));
      const phases: string[] = [];
      let done = false;
      const following = followPromotion(api(), NS, name, { timeoutMs: 20_000, onPhase: (p) => phases.push(p) }).finally(() => (done = true));
      await advanceClockUntil(clock, () => done, 'the Promotion to end');
      const result = await following;
      expect(result).toMatchObject({ phase: 'Succeeded', timedOut: false });
      expect(phases.at(-1)).toBe('Succeeded');
      expect(phases).toContain('Running');
      expect(world.server.requestCounts.get('watch promotions')).toBe(1);
    } finally {
      kargo.stop();
    }
  });

  it('stage health: the thread\'s judgement of the Stage read live: healthy once since the last Promotion stays healthy through Progressing; Unhealthy and a failed Promotion count', async () => {
    const setStage = (status: Record<string, unknown>): void => void world.store.patch(rt('Stage'), NS, 'prod-us', 'merge', { status }, { subresource: 'status' });
    setStage({ lastPromotion: { name: 'prod-us.01j.f0e1d2c', freight: { name: NEW }, finishedAt: '2026-08-20T11:55:00Z', status: { phase: 'Succeeded' } }, health: { status: 'Progressing' } });
    expect(await stageHealth(api(), NS, 'prod-us')).toMatchObject({ judged: 'waiting-health', phase: 'Progressing', healthySincePromotion: false, message: 'Stage Progressing, not yet healthy since the Promotion' });
    // The thread latched under this Promotion: status says what the thread says.
    expect(await stageHealth(api(), NS, 'prod-us', { followed: [{ promotion: 'prod-us.01j.f0e1d2c', healthyAt: 1 }] })).toMatchObject({ judged: 'healthy', latch: 'thread', message: 'healthy since promotion · now Progressing' });
    // A latch under another Promotion does not count.
    expect(await stageHealth(api(), NS, 'prod-us', { followed: [{ promotion: 'prod-us.01h.a1b2c3d', healthyAt: 1 }] })).toMatchObject({ judged: 'waiting-health', latch: 'cluster' });
    // No release follows it: the Freight verified here after the Promotion says it was Healthy then; autoscaling now is not a failure.
    world.store.patch(rt('Freight'), NS, NEW, 'merge', { status: { verifiedIn: { 'prod-us': { verifiedAt: '2026-08-20T11:58:00Z' } } } }, { subresource: 'status' });
    const scaled = await stageHealth(api(), NS, 'prod-us');
    expect(scaled).toMatchObject({ phase: 'Healthy', judged: 'healthy', healthySincePromotion: true, latch: 'cluster', reading: { health: 'Progressing' } });
    expect(scaled.message).toBe('healthy since promotion · now Progressing');
    setStage({ health: { status: 'Unhealthy' } });
    expect(await stageHealth(api(), NS, 'prod-us')).toMatchObject({ phase: 'Degraded', judged: 'unhealthy', message: 'Stage Unhealthy' });
    setStage({ health: { status: 'Unknown' }, lastPromotion: { name: 'prod-us.01k.f0e1d2c', freight: { name: NEW }, status: { phase: 'Failed', message: 'step argocd-update failed' } } });
    expect(await stageHealth(api(), NS, 'prod-us')).toMatchObject({ judged: 'promotion-failed', message: 'Promotion Failed: step argocd-update failed', healthySincePromotion: false });
  });
});
