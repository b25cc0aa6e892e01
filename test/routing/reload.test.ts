/**
 * A reloaded config applied to the running one, pure (src/routing/running-config.ts and the
 * catalog's reconfigure; src/config/live-fields.ts): groups already seen are filled again by the
 * new template, so a stage added shows in their pipelines; a template or pipeline removed retires
 * (found by name, no longer listed), said once each; an unchanged group is not generated again;
 * fields that cannot change live are named by path, one line each.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { restartNeeded } from '../../src/config/live-fields.js';
import { catalogOf, pipelineNamed, withCatalog, type CatalogEvents } from '../../src/routing/catalog.js';
import type { GeneratedFrom } from '../../src/routing/generator.js';
import { applyConfig } from '../../src/routing/running-config.js';

const PROD = '{ name: prod, cluster: prod, rollouts: { namespace: "{{namespace}}", selector: "tracked=true,app.kubernetes.io/name={{value}}" } }';
const DR = '{ name: dr, cluster: dr, rollouts: { namespace: "{{namespace}}", selector: "tracked=true,app.kubernetes.io/name={{value}}" } }';
const file = (o: { stages?: string[]; template?: boolean; legacy?: boolean; settings?: string; clusters?: string } = {}) =>
  parseConfigFile(`
settings: { ${o.settings ?? ''} }
clusters: ${o.clusters ?? '[{ name: prod, kubeconfigContext: prod }, { name: dr, kubeconfigContext: dr }]'}
pipelines:${o.legacy === false ? ' []' : `
  - name: legacy
    channel: C0LEGACY
    stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=legacy" } }]`}
pipelineTemplates:${o.template === false ? ' []' : `
  - name: "{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop], selector: "tracked=true" }
      groupBy: { label: app.kubernetes.io/name }
    stages: [${(o.stages ?? [PROD]).join(', ')}]`}
`);

const rollout = (name: string): GeneratedFrom => ({ kind: 'Rollout', cluster: 'prod', namespace: 'shop', name, uid: `uid-${name}`, resourceVersion: '1', labels: { tracked: 'true', 'app.kubernetes.io/name': name }, annotations: {} });

function running(events: string[]) {
  const said: CatalogEvents = { generated: (g) => events.push(`generated ${g.pipeline.name}`), retired: (g) => events.push(`retired ${g.pipeline.name}`) };
  const config = withCatalog(file(), said);
  for (const app of ['cart', 'search']) catalogOf(config)!.observe(rollout(app));
  return config;
}

describe('a reloaded config applied in place', () => {
  it('a freeze added by a reload is the running config\'s from then on (the freeze gate and the parent read it at each use), and needs no restart', () => {
    const config = running([]);
    const frozen = parseConfigFile(`clusters: [{ name: prod, kubeconfigContext: prod }, { name: dr, kubeconfigContext: dr }]
freezes: [{ name: sale, reason: the sale, start: "2026-11-27T00:00", end: "2026-11-30T00:00" }]`);
    expect(restartNeeded(config, frozen).filter((line) => line.startsWith('freezes'))).toEqual([]);
    applyConfig(config, frozen);
    expect(config.freezes.map((f) => f.name)).toEqual(['sale']);
  });

  it('refills the groups already seen by the changed template: a stage added shows in their pipelines, nothing is generated twice', () => {
    const events: string[] = [];
    const config = running(events);
    expect(pipelineNamed(config, 'cart')?.stages.map((s) => s.name)).toEqual(['prod']);
    applyConfig(config, file({ stages: [PROD, DR] }));
    expect(pipelineNamed(config, 'cart')?.stages.map((s) => s.name)).toEqual(['prod', 'dr']);
    expect(config.pipelines.map((p) => p.name)).toEqual(['legacy', 'cart', 'search']);
    expect(events).toEqual(['generated cart', 'generated search']);
    // The same file again changes nothing and says nothing.
    applyConfig(config, file({ stages: [PROD, DR] }));
    expect(events).toEqual(['generated cart', 'generated search']);
  });

  it('a template and a pipeline removed retire: no longer listed, still found by name (their threads and buttons), said once', () => {
    const events: string[] = [];
    const config = running(events);
    applyConfig(config, file({ template: false, legacy: false }));
    expect(config.pipelines).toEqual([]);
    expect(pipelineNamed(config, 'legacy')?.channel).toBe('C0LEGACY');
    expect(pipelineNamed(config, 'cart')?.channel).toBe('C0FLEET');
    expect(events).toEqual(['generated cart', 'generated search', 'retired cart', 'retired search']);
    expect(config.pipelineTemplates).toEqual([]);
    // Put back, the pipeline is listed again and the objects already seen regroup when next seen.
    applyConfig(config, file());
    expect(config.pipelines.map((p) => p.name)).toEqual(['legacy']);
    catalogOf(config)!.observe(rollout('cart'));
    expect(config.pipelines.map((p) => p.name)).toEqual(['legacy', 'cart']);
  });
});

describe('fields a reload cannot change', () => {
  it('names each by path, and lets live fields through', () => {
    expect(restartNeeded(file(), file({ stages: [PROD, DR], legacy: false, settings: 'stallAfterMinutes: 5, watchApplicationSelector: "a=b"' }))).toEqual([]);
    expect(restartNeeded(file(), file({ settings: 'watchLeaseSeconds: 30, finishedReleaseTtlHours: 1' }))).toEqual([
      'settings.finishedReleaseTtlHours: needs a restart (read once at start-up); the running value stays until then',
      'settings.watchLeaseSeconds: needs a restart (read once at start-up); the running value stays until then',
    ]);
    expect(restartNeeded(file(), file({ clusters: '[{ name: prod, kubeconfigContext: other, facts: watch }, { name: dr, kubeconfigContext: dr }, { name: edge, inCluster: true }]' }))).toEqual([
      'clusters[0].kubeconfigContext: needs a restart (the cluster\'s client is built at start-up)',
      'clusters[2]: cluster "edge" is new: adding a cluster needs a restart (its client is built at start-up)',
    ]);
    expect(restartNeeded(file(), file({ clusters: '[{ name: prod, kubeconfigContext: prod }]', stages: [PROD] }))).toEqual(['clusters[1]: cluster "dr" is gone: removing a cluster needs a restart']);
  });
});
