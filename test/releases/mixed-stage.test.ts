/**
 * A stage that mixes apps (issue 22 item 3): five release-tracked apps in one namespace, one
 * pipeline whose stage selects the shared label. A release of one app completes when its own
 * targets are Healthy, and the thread says once that the stage mixes apps and how to split it.
 * Through the worker's own batch step (test/helpers/reduce-harness.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, type RolloutShape } from '../helpers/rollout-bodies.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const min = 60_000;

const config = parseConfigFile(`
settings: { stallAfterMinutes: 20, unhealthyGraceMinutes: 2 }
clusters:
  - { name: prod, kubeconfigContext: prod, optional: true }
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: shop, selector: "hangar.io/release-tracked=true" }
`);

let rv = 100;
/** One Rollout of `app` at `releaseId`: its own uid, the shared label and its app label. */
function fact(app: string, releaseId: string, phase: RolloutShape['phase'], at: number, name = app, appLabel: string | null = app) {
  rv += 1;
  const pod = `${releaseId.replace(/[^a-z0-9]/g, '')}aa`.slice(0, 10);
  const labels: Record<string, string> = { 'hangar.io/release-tracked': 'true', ...(appLabel ? { 'app.kubernetes.io/name': appLabel } : {}) };
  return rolloutFact(
    rolloutBody({ name, uid: `uid-${name}`, generation: rv, rv, releaseId, podHash: pod, stableRS: phase === 'Healthy' ? pod : 'stable0000', step: phase === 'Paused' ? 1 : undefined, phase, labels }),
    at,
  );
}

function prod(h: Harness, releaseId: string) {
  const stage = h.record(releaseId)?.stages[0];
  if (!stage) throw new Error(`no release ${releaseId}`);
  return stage;
}

const mixedReplies = (h: Harness, releaseId: string) => h.replies('mixed-stage').filter((r) => r.releaseId === releaseId);

describe('a stage that mixes apps', () => {
  it('two apps released on their own: each release completes on its own targets and says once that the stage mixes apps', () => {
    const h = new Harness(config);
    // Start-up: both apps running their last releases.
    h.apply(fact('checkout', 'checkout-1', 'Healthy', T0));
    h.apply(fact('payments', 'payments-1', 'Healthy', T0 + 1));

    // checkout is released: paused, then Healthy; payments stays at its own release.
    h.apply(fact('checkout', 'checkout-2', 'Paused', T0 + min));
    expect(prod(h, 'checkout-2').pending).toEqual([]);
    expect(prod(h, 'checkout-2').otherReleases).toMatchObject({
      own: { targets: ['prod/shop/checkout'], count: 1, app: 'checkout' },
      others: [{ releaseId: 'payments-1', targets: ['prod/shop/payments'], count: 1, app: 'payments' }],
      split: { label: 'app.kubernetes.io/name', value: 'checkout' },
    });
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + 2 * min));
    expect(h.record('checkout-2')!.status).toBe('Complete');

    // payments is released on its own while checkout-2's thread keeps hearing checkout.
    h.apply(fact('payments', 'payments-2', 'Paused', T0 + 3 * min));
    h.apply(fact('payments', 'payments-2', 'Healthy', T0 + 4 * min));
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + 5 * min, 'checkout')); // a new observation (rv moves)
    expect(h.record('payments-2')!.status).toBe('Complete');
    expect(h.record('checkout-2')!.status).toBe('Complete');
    expect(prod(h, 'checkout-2').otherReleases?.others.map((o) => o.releaseId)).toEqual(['payments-2']);

    for (const releaseId of ['checkout-2', 'payments-2']) {
      const replies = mixedReplies(h, releaseId);
      expect(replies).toHaveLength(1);
      expect(replies[0]!.effect.detail.mixed).toMatchObject({ selector: 'hangar.io/release-tracked=true', split: { label: 'app.kubernetes.io/name' } });
    }
    // The release opened by payments' first fact saw checkout already there; checkout's first release did not see payments yet.
    expect(mixedReplies(h, 'payments-1')).toHaveLength(1);
    expect(mixedReplies(h, 'checkout-1')).toHaveLength(0);
  });

  it('one app whose Rollouts move at different times is not mixed: the one still at the previous release is still to start', () => {
    const h = new Harness(config);
    h.apply(fact('checkout', 'checkout-1', 'Healthy', T0, 'checkout-api'));
    h.apply(fact('checkout', 'checkout-1', 'Healthy', T0 + 1, 'checkout-web'));
    // A sync wave: the API moves first and is Healthy before the web Rollout is applied.
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + min, 'checkout-api'));
    expect(prod(h, 'checkout-2').pending).toEqual(['prod/shop/checkout-web']);
    expect(prod(h, 'checkout-2').otherReleases).toBeUndefined();
    expect(h.record('checkout-2')!.status).toBe('InProgress');
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + 2 * min, 'checkout-web'));
    expect(h.record('checkout-2')!.status).toBe('Complete');
    expect(h.replies('mixed-stage')).toHaveLength(0);
  });

  it('first heard at start-up, mid-release: a Rollout of the same app (same app label) at the previous release is still to start, not another app', () => {
    const h = new Harness(config);
    // Glidepath starts while checkout-2 rolls: the web Rollout is still at checkout-1, and no
    // target of checkout-2 was heard at checkout-1 (no lineage to go by).
    h.apply(fact('checkout', 'checkout-1', 'Healthy', T0, 'checkout-web'));
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + min, 'checkout-api'));
    expect(prod(h, 'checkout-2').pending).toEqual(['prod/shop/checkout-web']);
    expect(prod(h, 'checkout-2').otherReleases).toBeUndefined();
    expect(h.record('checkout-2')!.status).toBe('InProgress');
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + 2 * min, 'checkout-web'));
    expect(h.record('checkout-2')!.status).toBe('Complete');
    expect(h.replies('mixed-stage')).toHaveLength(0);
  });

  it('without a label that tells the apps apart, the reply says which label to add instead of a selector', () => {
    const h = new Harness(config);
    h.apply(fact('checkout', 'checkout-1', 'Healthy', T0, 'checkout', null));
    h.apply(fact('payments', 'payments-1', 'Healthy', T0 + 1, 'payments', null));
    h.apply(fact('checkout', 'checkout-2', 'Healthy', T0 + min, 'checkout', null));
    expect(h.record('checkout-2')!.status).toBe('Complete');
    const [reply] = mixedReplies(h, 'checkout-2');
    expect(reply?.effect.detail.mixed?.split).toBeUndefined();
    expect(reply?.effect.detail.mixed?.others).toEqual([{ releaseId: 'payments-1', targets: ['prod/shop/payments'], count: 1 }]);
  });
});
