/**
 * A gap in what Glidepath heard (the watch was down, a takeover after a crash, lost notifications)
 * is said as one: when the first fact after a pause is steps further on, the thread says where the
 * Rollout was next heard and that the steps between were not seen, and says "promoted fully" only
 * on evidence (`status.promoteFull`). Through the worker's own batch step (the reduce harness).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderReply } from '../../src/slack/render/reply.js';
import type { ThreadReplyEffect } from '../../src/slack/render/types.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, STEPS, type RolloutShape } from '../helpers/rollout-bodies.js';
import { testConfig } from '../helpers/pipeline.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');
const rel4: Omit<RolloutShape, 'phase' | 'rv'> = { generation: 12, releaseId: 'rel-4', podHash: '7c9d6b5f48', stableRS: '59c8fd7b64' };

/** Paused for approval at step index `at`, then the next fact heard is `next`. */
function pausedThen(at: number, next: Partial<RolloutShape>): Harness {
  const h = new Harness(testConfig());
  h.ownActions = {};
  h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: at, phase: 'Paused' }), T0));
  h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 260, phase: 'Progressing', message: 'more replicas need to be updated', ...next }), T0 + 20 * 60_000));
  return h;
}

function resumedText(h: Harness): string | undefined {
  const [reply] = h.replies('resumed');
  const record = h.record('rel-4');
  return reply && record ? renderReply(reply.effect as ThreadReplyEffect, record).text : undefined;
}

describe('a gap in what Glidepath heard', () => {
  it('a Rollout next heard with every step done, without status.promoteFull: resumed, and the steps between were not seen (the kill -9 takeover of issue 20)', () => {
    const h = pausedThen(1, { step: STEPS.length, phase: 'Healthy', podHash: rel4.podHash, stableRS: rel4.podHash, message: undefined });
    expect(h.replies('resumed').map((r) => r.effect.detail)).toEqual([{ by: 'outside', generation: 12, podHash: '7c9d6b5f48', stepIndex: 1, stepCount: STEPS.length, heardAtStep: STEPS.length }]);
    const text = resumedText(h)!;
    expect(text).not.toMatch(/promoted fully|skipped/);
    expect(text).toContain('was resumed outside Glidepath');
    expect(text).toContain(`It was next heard with all ${STEPS.length} steps done; steps 3–${STEPS.length} between were not seen (missed while Glidepath could not hear the cluster).`);
  });

  it('next heard at a later step: where, and which steps were not seen', () => {
    const text = resumedText(pausedThen(1, { step: 4 }))!;
    expect(text).toContain(`It was next heard at step 5 of ${STEPS.length}; steps 3–4 between were not seen`);
    expect(resumedText(pausedThen(1, { step: 3 }))).toContain(`It was next heard at step 4 of ${STEPS.length}; step 3 between was not seen`);
  });

  it('the step right after the pause: no gap, nothing said about unseen steps', () => {
    const h = pausedThen(1, { step: 2 });
    expect(h.replies('resumed')[0]!.effect.detail.heardAtStep).toBeUndefined();
    expect(resumedText(h)).not.toContain('not seen');
  });

  it('status.promoteFull seen: promoted fully, even when the first fact after it is at the end', () => {
    const h = pausedThen(1, { step: STEPS.length, promoteFull: true });
    expect(h.replies('resumed')[0]!.effect.detail).toMatchObject({ promotedFully: true });
    expect(h.replies('resumed')[0]!.effect.detail.heardAtStep).toBeUndefined();
    expect(resumedText(h)).toContain('promoted fully (every remaining step skipped)');
  });

  it('property: "promoted fully" exactly when status.promoteFull was seen; otherwise the steps between the pause and the first fact after it are named as not seen', () => {
    // The one step of STEPS that waits for a person is index 1 (`pause: {}`); what varies is which later steps Glidepath heard.
    const APPROVAL = 1;
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: APPROVAL + 1, max: STEPS.length }), { minLength: 1, maxLength: STEPS.length - APPROVAL }), fc.boolean(), (heardSteps, promoteFull) => {
        const heard = [...heardSteps].sort((a, b) => a - b);
        const h = new Harness(testConfig());
        h.ownActions = {};
        h.apply(rolloutFact(rolloutBody({ ...rel4, rv: 201, step: APPROVAL, phase: 'Paused' }), T0));
        heard.forEach((step, i) => {
          const done = step === STEPS.length;
          const shape: RolloutShape = { ...rel4, rv: 210 + i, step, phase: done ? 'Healthy' : 'Progressing', message: done ? undefined : 'more replicas need to be updated', ...(done ? { stableRS: rel4.podHash } : {}), promoteFull: promoteFull && i === 0 };
          h.apply(rolloutFact(rolloutBody(shape), T0 + (i + 1) * 60_000));
        });
        const settles = h.effects.map((e) => e.effect).filter((e) => e.type === 'thread.settle');
        expect(settles.map((e) => ('ended' in e ? e.ended.how : undefined))).toEqual([promoteFull ? 'promoted' : 'resumed']);
        expect(h.replies('resumed')).toHaveLength(1);
        const text = resumedText(h)!;
        expect(text.includes('promoted fully')).toBe(promoteFull);
        const first = heard[0] as number;
        const gap = !promoteFull && first > APPROVAL + 1;
        expect(/between (was|were) not seen/.test(text)).toBe(gap);
        if (gap) expect(text).toContain(first === APPROVAL + 2 ? `step ${first} between` : `steps ${APPROVAL + 2}–${first} between`);
      }),
      { numRuns: 200 },
    );
  });
});
