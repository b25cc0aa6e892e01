/**
 * A release that ended keeps the stages it ended with. A reload (or a restart on a changed file)
 * that adds a stage to its pipeline must not reopen it: a heartbeat of a finished release would
 * otherwise add the new stage as Waiting and turn a Complete thread back to InProgress.
 */
import { describe, expect, it } from 'vitest';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, type RolloutShape } from '../helpers/rollout-bodies.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const DR_STAGE = `      - name: dr
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=dr" }
`;
const done = (env: string, rv: number, extra: Partial<RolloutShape> = {}): RolloutShape => ({
  name: `checkout-${env}`,
  uid: `uid-${env}`,
  labels: { 'app.kubernetes.io/part-of': 'checkout', env },
  generation: 3,
  rv,
  releaseId: 'rel-9',
  podHash: '7c9d6b5f48',
  stableRS: '7c9d6b5f48',
  phase: 'Healthy',
  ...extra,
});

describe('a finished release and a stage added to its pipeline since', () => {
  it('stays Complete with the stages it ended with, through heartbeats, new observations and facts for the new stage', () => {
    const before = new Harness(testConfig());
    before.apply(rolloutFact(rolloutBody(done('staging', 11)), T0));
    before.apply(rolloutFact(rolloutBody(done('prod', 12)), T0 + 1_000));
    expect(before.record('rel-9')?.status).toBe('Complete');

    // The same records and indexes, under the config with a third stage.
    const after = new Harness(testConfig(DR_STAGE));
    for (const [k, v] of before.records) after.records.set(k, v);
    for (const [k, v] of before.targets) after.targets.set(k, new Map(v));
    after.apply(rolloutFact(rolloutBody({ ...done('prod', 12), sentAt: 99 }), T0 + 60_000)); // a heartbeat
    after.apply(rolloutFact(rolloutBody(done('prod', 13, { replicas: 6 })), T0 + 120_000)); // a new observation, same release
    after.apply(rolloutFact(rolloutBody(done('dr', 14)), T0 + 180_000)); // the new stage's target, at this release
    const record = after.record('rel-9')!;
    expect(record.status).toBe('Complete');
    expect(record.stages.map((s) => s.name)).toEqual(['staging', 'prod']);
    expect(after.outcomes.at(-1)).toBe('ignored');
    expect(after.replies().filter((r) => r.releaseId === 'rel-9')).toEqual([]);
  });
});
