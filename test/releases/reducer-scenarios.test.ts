/**
 * What the Argo Rollouts notifications engine produces in real life, one scenario each, and
 * what a person would then see in the release record and its replies.
 */
import { describe, expect, it } from 'vitest';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { fixture, rolloutBody, type RolloutShape } from '../helpers/rollout-bodies.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const min = 60_000;

function stage(h: Harness, releaseId: string, name = 'prod') {
  const s = h.record(releaseId)?.stages.find((x) => x.name === name);
  if (!s) throw new Error(`no stage ${name} in ${releaseId}`);
  return s;
}
function target(h: Harness, releaseId: string) {
  return Object.values(stage(h, releaseId).targets)[0]!;
}

const rel4: Omit<RolloutShape, 'phase' | 'rv'> = { generation: 12, releaseId: 'rel-4', podHash: '7c9d6b5f48', stableRS: '59c8fd7b64' };

describe('reducer scenarios', () => {
  it('create: the first fact of a Rollout creates the release and a healthy stage latches', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ generation: 1, rv: 100, releaseId: 'rel-1', podHash: 'aaa', stableRS: 'aaa', phase: 'Healthy' }), T0));
    const r = h.record('rel-1')!;
    expect(r.idSource).toBe('annotation');
    expect(r.images).toEqual(['registry.example.com/shop/checkout:1.29.0']);
    expect(stage(h, 'rel-1').status).toBe('Healthy');
    expect(stage(h, 'rel-1').healthyAt).toBe(T0);
    expect(h.replies('stage-healthy')).toHaveLength(1);
    expect(r.status).toBe('InProgress'); // staging has not reported this release
  });

  it('image update: canary pause asks for approval once, then healthy latches the stage', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 200, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }), T0));
    expect(stage(h, 'rel-4').status).toBe('Progressing');
    expect(target(h, 'rel-4').weight).toBe(20);

    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused' }), T0 + min));
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused', sentAt: 9 }), T0 + 2 * min)); // heartbeat
    expect(stage(h, 'rel-4').status).toBe('Paused');
    expect(h.record('rel-4')!.status).toBe('Paused');
    const paused = h.replies('paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]!.effect.detail).toMatchObject({ generation: 12, podHash: '7c9d6b5f48', stepIndex: 1, stepCount: 7, weight: 20, message: 'CanaryPauseStep' });
    expect(paused[0]!.effect.needsPerson).toBe(true);

    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 202, step: 2, phase: 'Progressing', message: 'more replicas need to be updated' }), T0 + 3 * min));
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 210, stableRS: '7c9d6b5f48', phase: 'Healthy' }), T0 + 30 * min));
    expect(stage(h, 'rel-4').status).toBe('Healthy');
    expect(stage(h, 'rel-4').healthyAt).toBe(T0 + 30 * min);
    expect(target(h, 'rel-4').weight).toBe(100);
    expect(h.replies('stage-healthy')).toHaveLength(1);
    expect(h.replies('paused')).toHaveLength(1);
  });

  it('healthy then Progressing (autoscaling) keeps the latch; a short Degraded blip is not reported', () => {
    const h = new Harness(testConfig());
    const healthy = { ...rel4, stableRS: rel4.podHash };
    h.apply(rolloutFact(rolloutBody({ ...healthy, rv: 300, phase: 'Healthy' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 301, replicas: 8, phase: 'Progressing', message: 'updated replicas are still becoming available' }), T0 + min));
    expect(stage(h, 'rel-4').status).toBe('Progressing');
    expect(stage(h, 'rel-4').healthyAt).toBe(T0);
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 302, replicas: 8, phase: 'Degraded', message: 'ProgressDeadlineExceeded: x' }), T0 + 2 * min));
    expect(h.replies('degraded')).toHaveLength(0);
    // Still Degraded past the grace period: now it is a problem worth a person.
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 302, replicas: 8, phase: 'Degraded', message: 'ProgressDeadlineExceeded: x', sentAt: 5 }), T0 + 5 * min));
    expect(h.replies('degraded')).toHaveLength(1);
    expect(stage(h, 'rel-4').healthyAt).toBe(T0);
  });

  it('a Rollout still Degraded when the grace ends is reported then, though no fact comes to say so', () => {
    const h = new Harness(testConfig());
    const healthy = { ...rel4, stableRS: rel4.podHash };
    h.apply(rolloutFact(rolloutBody({ ...healthy, rv: 300, phase: 'Healthy' }), T0));
    const since = T0 + 2 * min;
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 302, replicas: 8, phase: 'Degraded', message: 'ProgressDeadlineExceeded: x' }), since));
    expect(h.replies('degraded')).toHaveLength(0);
    const grace = 2 * min;
    expect(h.effects.map((e) => e.effect)).toContainEqual({ id: `recheck:${since + grace}`, type: 'release.recheck', dueAt: since + grace });
    // The due time (the watchdog queue's delayed job) with nothing heard in between.
    expect(h.apply({ kind: 'watchdog', source: 'watchdog', receivedAt: since + grace, pipeline: 'checkout', releaseId: 'rel-4', silentSince: since + grace, recheck: true })).toEqual(['applied']);
    expect(h.replies('degraded')).toHaveLength(1);
  });

  it('update back to an earlier image under a new release id is a new release and supersedes the old one', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 400, stableRS: rel4.podHash, phase: 'Healthy' }), T0));
    h.apply(
      rolloutFact(
        rolloutBody({ generation: 13, rv: 401, releaseId: 'rel-5', image: 'registry.example.com/shop/checkout:1.28.0', podHash: '59c8fd7b64', stableRS: '7c9d6b5f48', step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }),
        T0 + min,
      ),
    );
    expect(h.record('rel-5')!.images).toEqual(['registry.example.com/shop/checkout:1.28.0']);
    expect(stage(h, 'rel-5').status).toBe('Progressing');
    expect(target(h, 'rel-4').supersededBy).toBe('rel-5');
    expect(stage(h, 'rel-4').status).toBe('Healthy'); // as it was last seen in this release
    expect(stage(h, 'rel-4').healthyAt).toBe(T0);
    expect(h.record('rel-4')!.status).toBe('Superseded');
    expect(h.replies('drift')).toHaveLength(0);
    // A late fact of the old release changes nothing any more.
    expect(h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 399, stableRS: rel4.podHash, phase: 'Healthy' }), T0 + 2 * min))).toEqual(['out-of-order']);
  });

  it('scale only: a new generation with the same pod hash is recorded as a scale, not a release', () => {
    const h = new Harness(testConfig());
    const healthy = { ...rel4, stableRS: rel4.podHash };
    h.apply(rolloutFact(rolloutBody({ ...healthy, rv: 500, phase: 'Healthy' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 501, replicas: 10, phase: 'Healthy' }), T0 + min));
    expect(h.records.size).toBe(1);
    const events = h.record('rel-4')!.events.map((e) => e.kind);
    expect(events).toContain('scale');
    expect(h.replies().map((r) => r.effect.kind)).toEqual(['stage-healthy']);
  });

  it('restart: a restartAt on the same pod hash is recorded as a restart', () => {
    const h = new Harness(testConfig());
    const healthy = { ...rel4, stableRS: rel4.podHash };
    h.apply(rolloutFact(rolloutBody({ ...healthy, rv: 550, phase: 'Healthy' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...healthy, generation: 13, rv: 551, restartAt: '2026-08-20T10:00:00Z', restartedAt: '2026-08-20T10:00:00Z', phase: 'Healthy' }), T0 + min));
    expect(h.records.size).toBe(1);
    expect(h.record('rel-4')!.events.map((e) => e.kind)).toContain('restart');
  });

  it('bad image then abort: Degraded is reported, then the abort, then a retry is progress again', () => {
    const h = new Harness(testConfig());
    const bad = { ...rel4, image: 'registry.example.com/shop/checkout:1.29.0-typo' };
    h.apply(rolloutFact(rolloutBody({ ...bad, rv: 600, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...bad, rv: 601, step: 0, phase: 'Degraded', message: 'ProgressDeadlineExceeded: ReplicaSet "checkout-7c9d6b5f48" has timed out progressing.' }), T0 + 10 * min));
    expect(stage(h, 'rel-4').status).toBe('Degraded');
    expect(h.record('rel-4')!.status).toBe('Failed');
    expect(h.replies('degraded')).toHaveLength(1);

    const aborted = fixture('aborted');
    aborted.rollout.metadata.annotations['hangar.io/release-id'] = 'rel-4';
    aborted.rollout.metadata.resourceVersion = '602';
    h.apply(rolloutFact(aborted, T0 + 11 * min));
    expect(stage(h, 'rel-4').status).toBe('Aborted');
    expect(h.record('rel-4')!.status).toBe('Aborted');
    const reply = h.replies('aborted');
    expect(reply).toHaveLength(1);
    expect(reply[0]!.effect.detail.message).toMatch(/^RolloutAborted: Rollout aborted update to revision 4/);
    expect(target(h, 'rel-4').pause).toBeUndefined(); // the stale Paused condition is ignored

    // Retry (status.abort=false): the controller starts over at step 0.
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 610, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }), T0 + 20 * min));
    expect(stage(h, 'rel-4').status).toBe('Progressing');
    expect(h.record('rel-4')!.status).toBe('InProgress');
  });

  it('drift: the same release id running another image is reported once', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 700, stableRS: rel4.podHash, phase: 'Healthy' }), T0));
    const undo = { ...rel4, generation: 13, image: 'registry.example.com/shop/checkout:1.28.0', podHash: '59c8fd7b64', stableRS: '59c8fd7b64' };
    h.apply(rolloutFact(rolloutBody({ ...undo, rv: 701, phase: 'Healthy' }), T0 + min));
    h.apply(rolloutFact(rolloutBody({ ...undo, rv: 701, phase: 'Healthy', sentAt: 3 }), T0 + 2 * min));
    const drift = h.replies('drift');
    expect(drift).toHaveLength(1);
    expect(drift[0]!.effect.detail.message).toBe('registry.example.com/shop/checkout:1.28.0 instead of registry.example.com/shop/checkout:1.29.0');
    expect(h.records.size).toBe(1);
  });

  it('drift: a service that joined the release later is checked against its own image, as the first one is', () => {
    const h = new Harness(testConfig());
    const worker = { ...rel4, name: 'checkout-worker', uid: 'w1', image: 'registry.example.com/shop/checkout-worker:1.29.0', stableRS: rel4.podHash, phase: 'Healthy' as const };
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 700, stableRS: rel4.podHash, phase: 'Healthy' }), T0));
    // The release's images were checked against once before the second service joined them.
    h.apply(rolloutFact(rolloutBody({ ...worker, rv: 701 }), T0 + min));
    expect(h.record('rel-4')!.images).toEqual(['registry.example.com/shop/checkout-worker:1.29.0', 'registry.example.com/shop/checkout:1.29.0']);
    expect(h.replies('drift')).toHaveLength(0);
    h.apply(rolloutFact(rolloutBody({ ...worker, generation: 13, rv: 702, image: 'registry.example.com/shop/checkout-worker:1.28.0' }), T0 + 2 * min));
    h.apply(rolloutFact(rolloutBody({ ...rel4, generation: 13, rv: 703, stableRS: rel4.podHash, phase: 'Healthy', image: 'registry.example.com/shop/checkout:1.27.0' }), T0 + 3 * min));
    expect(h.replies('drift').map((r) => r.effect.detail.message)).toEqual([
      'registry.example.com/shop/checkout-worker:1.28.0 instead of registry.example.com/shop/checkout-worker:1.29.0',
      'registry.example.com/shop/checkout:1.27.0 instead of registry.example.com/shop/checkout:1.29.0',
    ]);
    // A drifted image is not taken for a new service: the release's images stay the two it announced.
    expect(h.record('rel-4')!.images).toHaveLength(2);
  });

  it('stale: a fact sent before the controller observed the generation changes nothing', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 800, step: 1, phase: 'Paused' }), T0));
    const before = structuredClone(h.record('rel-4'));
    const stale = fixture('stale');
    expect(h.apply(rolloutFact(stale, T0 + min))).toEqual(['stale']);
    expect(h.record('rel-4')).toEqual(before);
  });

  it('out of order: an older resourceVersion of the same generation is ignored', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 902, step: 2, phase: 'Progressing', message: 'x' }), T0));
    expect(h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 901, step: 1, phase: 'Paused' }), T0 + min))).toEqual(['out-of-order']);
    expect(stage(h, 'rel-4').status).toBe('Progressing');
    expect(h.replies('paused')).toHaveLength(0);
  });

  it('a stage is not healthy while a known target has not reported the release', () => {
    const h = new Harness(testConfig());
    const web = { ...rel4, stableRS: rel4.podHash, releaseId: 'rel-3' };
    h.apply(rolloutFact(rolloutBody({ ...web, rv: 1000, phase: 'Healthy' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...web, name: 'checkout-worker', uid: 'w1', rv: 1001, phase: 'Healthy' }), T0));
    // Release 4 reaches one of the two Rollouts of the stage.
    h.apply(rolloutFact(rolloutBody({ ...rel4, stableRS: rel4.podHash, generation: 13, rv: 1002, phase: 'Healthy' }), T0 + min));
    expect(stage(h, 'rel-4').status).toBe('Progressing');
    expect(stage(h, 'rel-4').pending).toEqual(['prod/shop/checkout-worker']);
    expect(stage(h, 'rel-4').healthyAt).toBeUndefined();
    h.apply(rolloutFact(rolloutBody({ ...rel4, stableRS: rel4.podHash, name: 'checkout-worker', uid: 'w1', generation: 13, rv: 1003, phase: 'Healthy' }), T0 + 2 * min));
    expect(stage(h, 'rel-4').status).toBe('Healthy');
    expect(stage(h, 'rel-4').pending).toEqual([]);
  });

  it('a Rollout first heard after its stage latched keeps the release from Complete until it was Healthy itself', () => {
    const h = new Harness(testConfig());
    const staging = { 'app.kubernetes.io/part-of': 'checkout', env: 'staging' };
    const healthy = { ...rel4, stableRS: rel4.podHash, phase: 'Healthy' as const };
    h.apply(rolloutFact(rolloutBody({ ...healthy, name: 'checkout', uid: 's1', rv: 1, labels: staging }), T0));
    expect(stage(h, 'rel-4', 'staging').healthyAt).toBe(T0);
    h.apply(rolloutFact(rolloutBody({ ...rel4, name: 'checkout-worker', uid: 's2', rv: 2, step: 0, phase: 'Progressing', message: 'more replicas need to be updated', labels: staging }), T0 + min));
    h.apply(rolloutFact(rolloutBody({ ...healthy, uid: 'p1', rv: 3 }), T0 + 2 * min));
    expect(stage(h, 'rel-4', 'prod').healthyAt).toBe(T0 + 2 * min);
    expect(h.record('rel-4')!.status).toBe('InProgress');
    expect(h.replies('release-complete')).toHaveLength(0);
    h.apply(rolloutFact(rolloutBody({ ...healthy, name: 'checkout-worker', uid: 's2', rv: 4, labels: staging }), T0 + 3 * min));
    expect(h.record('rel-4')!.status).toBe('Complete');
    expect(h.replies('release-complete')).toHaveLength(1);
  });

  it('facts that match no stage are not routed anywhere', () => {
    const h = new Harness(testConfig());
    const body = rolloutBody({ ...rel4, rv: 1, phase: 'Healthy', labels: { app: 'other' } });
    h.apply(rolloutFact(body, T0));
    expect(h.records.size).toBe(0);
  });

  it('a timed pause step shows Paused but asks nobody to approve', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 1100, step: 3, phase: 'Paused' }), T0)); // step 3 is pause: 10m
    expect(stage(h, 'rel-4').status).toBe('Paused');
    expect(h.replies('paused')).toHaveLength(0);
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 1101, step: 1, phase: 'Paused' }), T0)); // step 1 waits for a person
    expect(h.replies('paused')).toHaveLength(1);
  });
});
