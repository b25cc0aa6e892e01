import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { routeFact } from '../../src/routing/route.js';
import { normaliseRollout } from '../../src/facts/normalise.js';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { fixture } from '../helpers/rollout-bodies.js';

const config = parseConfigFile(`
clusters: [{ name: prod }]
pipelines:
  - name: checkout
    channel: C0CHECKOUT
    stages:
      - { name: eu, cluster: prod, rollouts: { namespace: shop, selector: "app=checkout,region in (eu, eu-west)" } }
      - { name: us, cluster: prod, rollouts: { namespace: shop, selector: "app=checkout,region=us" } }
      - { name: promo, cluster: prod, kargo: { project: shop, selector: "tier=prod" } }
`);

describe('label selectors are parsed once, at config load', () => {
  const [eu, us, promo] = config.pipelines[0]!.stages;

  it('the config holds a matcher with the text it was written as', () => {
    expect(eu!.rollouts!.selector.text).toBe('app=checkout,region in (eu, eu-west)');
    expect(eu!.rollouts!.selector.matches({ app: 'checkout', region: 'eu-west' })).toBe(true);
    expect(eu!.rollouts!.selector.matches({ app: 'checkout', region: 'us' })).toBe(false);
    expect(us!.rollouts!.selector.matches({ app: 'checkout', region: 'us' })).toBe(true);
    expect(promo!.kargo!.selector!.text).toBe('tier=prod');
  });

  it('prints as the text, so a logged config reads as written', () => {
    expect(JSON.parse(JSON.stringify(eu!.rollouts))).toEqual({ namespace: 'shop', selector: 'app=checkout,region in (eu, eu-west)' });
  });

  it('routing uses the compiled matchers', () => {
    const body = fixture('paused');
    body.rollout.metadata.labels = { app: 'checkout', region: 'eu' };
    const fact = normaliseRollout(rolloutFactBody.parse(body), 'prod', Date.now());
    expect(routeFact(config, fact).map((r) => r.stage.name)).toEqual(['eu']);
  });
});
