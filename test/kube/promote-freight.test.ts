/**
 * The Freight a Promote button is shown for: what the healthy upstream Kargo Stage runs when the
 * reply is handed to Slack, read as Glidepath's service account from the stand-in cluster.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { configFileSchema } from '../../src/config/file.js';
import { PromoteFreightResolver } from '../../src/releases/worker/promote-freight.js';
import { createLogger } from '../../src/obs/logger.js';
import type { ThreadEffect } from '../../src/releases/store/ports.js';
import { record } from '../slack/support/records.js';
import { startKubeWorld, type KubeWorld } from './support.js';

const NS = 'kargo-demo';
let world: KubeWorld;

beforeEach(async () => {
  world = await startKubeWorld({ clock: new FakeClock('2026-08-20T12:00:00Z') });
  const rt = world.store.registry.byKind('Stage', 'kargo.akuity.io');
  world.store.create(rt, NS, { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Stage', metadata: { name: 'staging' }, spec: { requestedFreight: [{ origin: { kind: 'Warehouse', name: 'shop' }, sources: { direct: true } }] } });
  world.store.patch(rt, NS, 'staging', 'merge', { status: { freightHistory: [{ id: 'c0', items: { 'Warehouse/shop': { name: 'f0e1d2c3' } } }] } }, { subresource: 'status' });
});
afterEach(async () => world.close());

const config = configFileSchema.parse({
  clusters: [{ name: 'prod' }],
  pipelines: [
    {
      name: 'shop',
      channel: 'C0SHOP',
      stages: [
        { name: 'canary', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app=shop' } },
        { name: 'staging', cluster: 'prod', kargo: { project: NS, stage: 'staging' } },
        { name: 'prod', cluster: 'prod', kargo: { project: NS, selector: 'tier=prod' } },
      ],
    },
  ],
});

const healthy = (stage: string, promoteTo: string): ThreadEffect => ({ id: `stage-healthy:${stage}`, type: 'thread.reply', kind: 'stage-healthy', stage, needsPerson: false, detail: { promoteTo } });

describe('the Freight on a Promote button', () => {
  it('is what the healthy upstream Kargo Stage runs; a non-Kargo upstream stage gives none', async () => {
    const resolver = new PromoteFreightResolver(config, () => world.clusters, createLogger('silent'));
    const release = record({ pipeline: 'shop', releaseId: 'rel-1' });
    const [fromKargo, fromRollouts] = await resolver.enrich(release, [healthy('staging', 'prod'), healthy('canary', 'staging')]);
    expect(fromKargo).toMatchObject({ detail: { promoteTo: 'prod', freight: 'f0e1d2c3' } });
    expect(fromRollouts).toMatchObject({ detail: { promoteTo: 'staging' } });
    expect((fromRollouts as { detail: { freight?: string } }).detail.freight).toBeUndefined();
  });
});
