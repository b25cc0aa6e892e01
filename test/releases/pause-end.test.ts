/**
 * The end of a pause a person was asked about, as the reducer sees it: who ended it (Glidepath,
 * someone outside it, the controller) is told from Glidepath's own actions, which the worker
 * reads and hands in; the reply that asked loses its buttons either way.
 */
import { describe, expect, it } from 'vitest';
import type { Effect } from '../../src/releases/record/record.js';
import { abortActionKey, resumeActionKey } from '../../src/releases/reduce/own-action-keys.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, STEPS, type RolloutShape } from '../helpers/rollout-bodies.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const TARGET = 'prod/shop/checkout';
const rel4: Omit<RolloutShape, 'phase' | 'rv'> = { generation: 12, releaseId: 'rel-4', podHash: '7c9d6b5f48', stableRS: '59c8fd7b64' };

function settles(h: Harness): Extract<Effect, { type: 'thread.settle' }>[] {
  return h.effects.map((e) => e.effect).filter((e): e is Extract<Effect, { type: 'thread.settle' }> => e.type === 'thread.settle');
}

function pausedThen(next: Omit<RolloutShape, keyof typeof rel4 | 'rv'> & Partial<RolloutShape>, own?: string[]): Harness {
  const h = new Harness(testConfig());
  h.ownActions = own ? { [TARGET]: own.map((key) => ({ key, user: 'U0ALICE' })) } : {};
  h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused' }), T0));
  h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused', sentAt: 9 }), T0 + 1_000)); // heartbeat
  expect(settles(h)).toEqual([]);
  h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 202, ...next }), T0 + 60_000));
  return h;
}

describe('the end of a pause', () => {
  it('resumed outside Glidepath: the reply loses its buttons and the thread says so, once', () => {
    const h = pausedThen({ step: 2, phase: 'Progressing', message: 'more replicas need to be updated' });
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 203, step: 3, phase: 'Paused' }), T0 + 120_000)); // a timed pause next: nobody asked
    const [settle] = settles(h);
    expect(settles(h)).toHaveLength(1);
    expect(settle!.reply.id).toBe(h.replies('paused')[0]!.effect.id);
    expect(settle!.ended).toEqual({ how: 'resumed', by: 'outside' });
    expect(h.replies('resumed').map((r) => r.effect.detail)).toEqual([{ by: 'outside', generation: 12, podHash: '7c9d6b5f48', stepIndex: 1, stepCount: STEPS.length }]);
  });

  it('approved through Glidepath: the reply loses its buttons, and no "outside" reply', () => {
    const h = pausedThen({ step: 2, phase: 'Progressing', message: 'more replicas need to be updated' }, [resumeActionKey('7c9d6b5f48', 1)]);
    expect(settles(h).map((s) => s.ended)).toEqual([{ how: 'resumed', by: 'glidepath', user: 'U0ALICE' }]);
    expect(h.replies('resumed')).toEqual([]);
  });

  it('an approval of another step through Glidepath does not count for this one', () => {
    const h = pausedThen({ step: 2, phase: 'Progressing', message: 'more replicas need to be updated' }, [resumeActionKey('7c9d6b5f48', 3), resumeActionKey('0ther', 1)]);
    expect(settles(h).map((s) => s.ended.by)).toEqual(['outside']);
  });

  it('promote --full outside Glidepath is told as a full promotion (status.promoteFull seen)', () => {
    const h = pausedThen({ step: STEPS.length, phase: 'Progressing', message: 'old replicas are pending termination', promoteFull: true });
    expect(settles(h).map((s) => s.ended)).toEqual([{ how: 'promoted', by: 'outside' }]);
    expect(h.replies('resumed')[0]!.effect.detail).toMatchObject({ promotedFully: true });
  });

  it('aborted outside Glidepath, or through it: the aborted reply and the settle say which', () => {
    const outside = pausedThen({ step: 0, phase: 'Degraded', abort: true, message: 'RolloutAborted: Rollout aborted update to revision 4' });
    expect(outside.replies('aborted')[0]!.effect.detail).toMatchObject({ by: 'outside' });
    expect(settles(outside).map((s) => s.ended)).toEqual([{ how: 'aborted', by: 'outside' }]);
    const own = pausedThen({ step: 0, phase: 'Degraded', abort: true, message: 'RolloutAborted: Rollout aborted update to revision 4' }, [abortActionKey(undefined)]);
    expect(own.replies('aborted')[0]!.effect.detail).toMatchObject({ by: 'glidepath', user: 'U0ALICE' });
    expect(settles(own).map((s) => s.ended)).toEqual([{ how: 'aborted', by: 'glidepath', user: 'U0ALICE' }]);
  });

  it('an abort after a failed analysis is the controller\'s, not a person\'s', () => {
    const h = pausedThen({ step: 0, phase: 'Degraded', abort: true, message: 'RolloutAborted: Rollout aborted update to revision 4: Step-based analysis phase Failed: metric "success-rate" assessed Failed' });
    expect(h.replies('aborted')[0]!.effect.detail).toMatchObject({ by: 'controller' });
  });

  it('an inconclusive analysis aborted through Glidepath is the person\'s abort, heard before or after the controller reconciled it', () => {
    // The pause condition's reason ("InconclusiveAnalysisRun") is the Rollout's message while it waits, and still is when the
    // watch hears status.abort (Glidepath's patch) before the controller reconciled it; the analysis stays Inconclusive.
    const analysis = { name: 'checkout-7c9d6b5f48-12-4', status: 'Inconclusive', message: 'metric "success-rate" assessed Inconclusive' };
    const inconclusive = { ...rel4, step: 4, phase: 'Paused' as const, pauseReason: 'InconclusiveAnalysisRun', analysis };
    for (const next of [
      { ...inconclusive, abort: true },
      { ...rel4, step: 0, phase: 'Degraded' as const, abort: true, message: 'RolloutAborted: Rollout aborted update to revision 4', analysis },
    ]) {
      const h = new Harness(testConfig());
      h.ownActions = { [TARGET]: [{ key: abortActionKey('7c9d6b5f48'), user: 'U0YOU' }] };
      h.apply(rolloutFact(rolloutBody({ ...inconclusive, rv: 201 }), T0));
      expect(h.replies('paused')).toHaveLength(1);
      h.apply(rolloutFact(rolloutBody({ ...next, rv: 202 }), T0 + 60_000));
      expect(settles(h).map((s) => s.ended)).toEqual([{ how: 'aborted', by: 'glidepath', user: 'U0YOU' }]);
      expect(h.replies('aborted')[0]!.effect.detail).toMatchObject({ by: 'glidepath', user: 'U0YOU' });
    }
  });

  it('without the own-actions ledger nothing is called "outside" (the reply still loses its buttons)', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused' }), T0));
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 202, step: 2, phase: 'Progressing', message: 'x' }), T0 + 60_000));
    expect(settles(h).map((s) => s.ended)).toEqual([{ how: 'resumed' }]);
    expect(h.replies('resumed')).toEqual([]);
  });

  it('a paused target that moves on to the next release: its reply loses its buttons', () => {
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: 1, phase: 'Paused' }), T0));
    h.apply(rolloutFact(rolloutBody({ generation: 13, rv: 300, releaseId: 'rel-5', podHash: 'abcdef1234', stableRS: '59c8fd7b64', step: 0, phase: 'Progressing', message: 'x', image: 'registry.example.com/shop/checkout:1.30.0' }), T0 + 60_000));
    expect(h.effects.filter((e) => e.effect.type === 'thread.settle').map((e) => [e.releaseId, (e.effect as { ended: unknown }).ended])).toEqual([['rel-4', { how: 'superseded', releaseId: 'rel-5' }]]);
  });
});

describe('the Promote offer of a healthy stage', () => {
  it('is made only where the next stage is a Kargo Stage', () => {
    const rollouts = new Harness(testConfig());
    rollouts.apply(rolloutFact(rolloutBody({ generation: 1, rv: 100, releaseId: 'rel-1', podHash: 'aaa', stableRS: 'aaa', phase: 'Healthy', labels: { 'app.kubernetes.io/part-of': 'checkout', env: 'staging' } }), T0));
    expect(rollouts.replies('stage-healthy').map((r) => [r.effect.stage, r.effect.detail])).toEqual([['staging', {}]]);

    const kargo = new Harness(
      testConfig(`
  - name: shop
    channel: C0123SHOP
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - { name: canary, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop" } }
      - { name: prod, cluster: prod, kargo: { project: kargo-demo, stage: prod } }
`),
    );
    kargo.apply(rolloutFact(rolloutBody({ generation: 1, rv: 100, releaseId: 'rel-1', podHash: 'aaa', stableRS: 'aaa', phase: 'Healthy', labels: { 'app.kubernetes.io/part-of': 'shop' } }), T0));
    expect(kargo.replies('stage-healthy').map((r) => [r.effect.stage, r.effect.detail])).toEqual([['canary', { promoteTo: 'prod' }]]);
  });
});
