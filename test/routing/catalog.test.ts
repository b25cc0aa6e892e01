/**
 * The pipeline catalog's rules, pure (src/routing/catalog.ts): replicas that saw the same objects
 * in any order generate the same pipelines; an explicit pipeline wins over a generated one of its
 * name; a retired pipeline is still found by name but no longer listed; a deleted object's late
 * facts do not bring its group back, while the same object seen anew does; a relabelled object
 * moves to its new group; a bad channel annotation falls back to the template's channel, said once.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { catalogOf, pipelineNamed, withCatalog, type CatalogEvents } from '../../src/routing/catalog.js';
import type { GeneratedFrom } from '../../src/routing/generator.js';
import { routeFact } from '../../src/routing/route.js';
import { rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';

const config = parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod }
pipelines:
  - name: payments
    channel: C0PAY
    stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/name=payments" } }]
pipelineTemplates:
  - name: "{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop, pay], selector: "tracked=true" }
      groupBy: { label: app.kubernetes.io/name }
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: "{{namespace}}", selector: "tracked=true,app.kubernetes.io/name={{value}}" } }
`);

const rollout = (name: string, app: string, extra: Partial<GeneratedFrom> = {}): GeneratedFrom => ({
  kind: 'Rollout',
  cluster: 'prod',
  namespace: 'shop',
  name,
  uid: `uid-${name}`,
  resourceVersion: '10',
  labels: { tracked: 'true', 'app.kubernetes.io/name': app },
  annotations: {},
  ...extra,
});

function fresh(events: CatalogEvents = {}) {
  const live = withCatalog(config, events);
  return { live, catalog: catalogOf(live)! };
}

describe('the pipeline catalog', () => {
  it('generates the same pipelines from the same objects, whatever order they were seen in', () => {
    const objects = [rollout('cart-a', 'cart', { namespace: 'pay' }), rollout('cart-b', 'cart'), rollout('search', 'search')];
    const a = fresh();
    const b = fresh();
    for (const o of objects) a.catalog.observe(o);
    for (const o of [...objects].reverse()) b.catalog.observe(o);
    const shape = (live: typeof a.live) => JSON.stringify(live.pipelines.map((p) => [p.name, p.channel, p.stages.map((s) => [s.rollouts?.namespace, s.rollouts?.selector.text])]));
    expect(shape(a.live)).toBe(shape(b.live));
    expect(a.live.pipelines.map((p) => p.name)).toEqual(['payments', 'cart', 'search']);
    // The group's first object in key order fills the placeholders: prod/pay/… before prod/shop/….
    expect(pipelineNamed(a.live, 'cart')?.stages[0]?.rollouts?.namespace).toBe('pay');
  });

  it('lets an explicit pipeline win over a generated one of its name, and says so once', () => {
    const problems: string[] = [];
    const { live, catalog } = fresh({ problem: (reason) => void problems.push(reason) });
    catalog.observe(rollout('payments', 'payments'));
    catalog.observe(rollout('payments', 'payments', { resourceVersion: '11' }));
    expect(live.pipelines.filter((p) => p.name === 'payments')).toEqual([config.pipelines[0]]);
    expect(problems).toEqual(['shadowed']);
  });

  it('retires a group with its last object: no longer listed, still found by name, and a late fact does not bring it back', () => {
    const retired: string[] = [];
    const { live, catalog } = fresh({ retired: (g) => void retired.push(g.pipeline.name) });
    catalog.observe(rollout('cart-a', 'cart'));
    catalog.observe(rollout('cart-b', 'cart'));
    catalog.forget(rollout('cart-a', 'cart'));
    expect(live.pipelines.map((p) => p.name)).toContain('cart');
    catalog.forget(rollout('cart-b', 'cart', { resourceVersion: '12' }));
    expect(retired).toEqual(['cart']);
    expect(live.pipelines.map((p) => p.name)).not.toContain('cart');
    expect(pipelineNamed(live, 'cart')?.name).toBe('cart');
    // A fact queued before the deletion, routed after it.
    catalog.observe(rollout('cart-b', 'cart', { resourceVersion: '11' }));
    expect(live.pipelines.map((p) => p.name)).not.toContain('cart');
    // The same Rollout relabelled back in (a newer version), or created again (a new uid).
    catalog.observe(rollout('cart-b', 'cart', { resourceVersion: '13' }));
    expect(live.pipelines.map((p) => p.name)).toContain('cart');
  });

  it('moves a relabelled object to its new group, retiring the old one', () => {
    const { live, catalog } = fresh();
    catalog.observe(rollout('web', 'cart'));
    catalog.observe(rollout('web', 'shopfront', { resourceVersion: '11' }));
    expect(live.pipelines.map((p) => p.name)).toEqual(['payments', 'shopfront']);
  });

  it('takes the channel from a valid annotation; a bad one falls back to the template\'s channel, said once', () => {
    const problems: unknown[] = [];
    const { live, catalog } = fresh({ problem: (reason, detail) => void problems.push({ reason, value: detail.value }) });
    catalog.observe(rollout('search', 'search', { annotations: { 'glidepath.io/channel': 'C0SEARCH' } }));
    catalog.observe(rollout('cart', 'cart', { annotations: { 'glidepath.io/channel': '#cart' } }));
    catalog.observe(rollout('cart', 'cart', { annotations: { 'glidepath.io/channel': '#cart' }, resourceVersion: '11' }));
    expect(pipelineNamed(live, 'search')?.channel).toBe('C0SEARCH');
    expect(pipelineNamed(live, 'cart')?.channel).toBe('C0FLEET');
    expect(problems).toEqual([{ reason: 'invalid_channel', value: '#cart' }]);
    // The annotation changed on the object: the pipeline follows.
    catalog.observe(rollout('cart', 'cart', { annotations: { 'glidepath.io/channel': 'C0CART' }, resourceVersion: '12' }));
    expect(pipelineNamed(live, 'cart')?.channel).toBe('C0CART');
  });

  it('groups Argo CD Applications as Rollouts, by the generator\'s own selector for them', () => {
    const withApps = parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod }
pipelineTemplates:
  - name: "app-{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod]
      applications: { selector: "tracked=true" }
      groupBy: { label: team }
    stages:
      - { name: prod, cluster: prod, applications: { namespace: argocd, selector: "team={{value}}" } }
`);
    const live = withCatalog(withApps);
    const catalog = catalogOf(live)!;
    catalog.observe({ kind: 'Application', cluster: 'prod', namespace: 'argocd', name: 'web', labels: { tracked: 'true', team: 'growth' }, annotations: {} });
    catalog.observe({ kind: 'Application', cluster: 'prod', namespace: 'argocd', name: 'other', labels: { team: 'ops' }, annotations: {} });
    catalog.observe(rollout('web', 'growth', { labels: { tracked: 'true', team: 'ops' } }));
    expect(live.pipelines.map((p) => [p.name, p.stages[0]?.applications?.selector.text])).toEqual([['app-growth', 'team=growth']]);
  });

  it('routes an app\'s facts to its own generated pipeline only, even when another app\'s stage would select it', () => {
    const loose = parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod }
pipelineTemplates:
  - name: "{{value}}"
    channel: C0FLEET
    generator: { clusters: [prod], rollouts: { namespaces: [shop], selector: "tracked=true" }, groupBy: { label: app.kubernetes.io/name } }
    # A stage that does not split by app: every generated pipeline's stage selects every app.
    stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "tracked=true" } }]
`);
    const live = withCatalog(loose);
    const fact = (name: string) => rolloutFact(rolloutBody({ name, uid: `uid-${name}`, generation: 1, rv: 5, releaseId: `${name}-1`, podHash: 'a1', stableRS: 'a1', phase: 'Healthy', labels: { tracked: 'true', 'app.kubernetes.io/name': name } }), 1_000);
    expect(routeFact(live, fact('cart')).map((r) => [r.pipeline.name, r.releaseId])).toEqual([['cart', 'cart-1']]);
    expect(routeFact(live, fact('search')).map((r) => [r.pipeline.name, r.releaseId])).toEqual([['search', 'search-1']]);
    expect(live.pipelines.map((p) => p.name)).toEqual(['cart', 'search']);
  });

  it('makes no pipeline of a group whose value is no valid name, and says why', () => {
    const problems: string[] = [];
    const { live, catalog } = fresh({ problem: (reason) => void problems.push(reason) });
    catalog.observe(rollout('odd', 'Not_A_Name'));
    expect(live.pipelines.map((p) => p.name)).toEqual(['payments']);
    expect(problems).toEqual(['invalid_pipeline']);
  });
});
