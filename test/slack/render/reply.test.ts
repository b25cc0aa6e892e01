import { describe, expect, it } from 'vitest';
import type { ReplyKind } from '../../../src/releases/record/record.js';
import { TRUNCATED } from '../../../src/text/mrkdwn.js';
import { ABORT_ACTION_ID, APPROVE_ACTION_ID, REJECT_ACTION_ID, PROMOTE_ACTION_ID, type ButtonValue } from '../../../src/slack/buttons.js';
import { renderReply } from '../../../src/slack/render/reply.js';
import { record, reply, T0 } from '../support/records.js';
import { expectNoPings, expectWithinSlackLimits } from './limits.js';

function text(msg: ReturnType<typeof renderReply>): string {
  const first = msg.blocks[0];
  if (first?.type !== 'section') throw new Error('a reply starts with a section');
  return first.text.text;
}

describe('renderReply', () => {
  it('asks for approval of a paused step with Approve, Reject and Abort buttons that identify what was shown', () => {
    const msg = renderReply(
      reply('paused', { generation: 7, podHash: '6b8f7c9d5', stepIndex: 2, stepCount: 8, weight: 20, message: 'CanaryPauseStep' }),
      record(),
    );
    expect(text(msg)).toBe(':double_vertical_bar: *prod* — `prod/shop/checkout` is paused (step 3/8, weight 20%) and waits for approval.\n>CanaryPauseStep');
    const actions = msg.blocks[1];
    if (actions?.type !== 'actions') throw new Error('no buttons');
    expect(actions.elements.map((e) => [e.action_id, e.text.text, e.style])).toEqual([
      [APPROVE_ACTION_ID, 'Approve', 'primary'],
      [REJECT_ACTION_ID, 'Reject', undefined],
      [ABORT_ACTION_ID, 'Abort', 'danger'],
    ]);
    // Reject names the same step as Approve: a rejection holds exactly what an approval would act on.
    expect(actions.elements[1]?.value).toBe(actions.elements[0]?.value);
    // Destructive: the button and Slack's own confirm dialog are both red (style danger).
    expect(actions.elements[2]?.confirm).toMatchObject({ style: 'danger', confirm: { type: 'plain_text', text: 'Abort' }, deny: { type: 'plain_text', text: 'Cancel' } });
    const value = JSON.parse(actions.elements[0]!.value) as ButtonValue;
    expect(value).toEqual({ v: 1, p: 'checkout', r: 'rel-5', st: 'prod', k: 'Rollout', c: 'prod', ns: 'shop', n: 'checkout', g: 7, h: '6b8f7c9d5', s: 2 });
  });

  const expected: Record<ReplyKind, string> = {
    paused: 'waits for approval',
    degraded: ':x: *prod* — `prod/shop/checkout` is Degraded.\n>ProgressDeadlineExceeded',
    'analysis-failed': 'the analysis failed (step 2/4).\n>ProgressDeadlineExceeded',
    'sync-failed': 'the Argo CD sync failed at revision `abc123` after 3 retries.\n>ProgressDeadlineExceeded',
    'sync-retrying': 'Argo CD sync attempt 3 failed at revision `abc123`; Argo CD retries it and reports Failed only after the last attempt.\n>ProgressDeadlineExceeded',
    aborted: 'was aborted; traffic went back to the stable version.',
    resumed: ':arrow_forward: *prod* — `prod/shop/checkout` was resumed (step 2/4): the pause this thread asked about is over.',
    drift: 'runs `registry.example/checkout:hotfix`, not this release\'s `registry.example/checkout:1.4.2`',
    stall: ':warning: No fact from *prod* — `prod/shop/checkout` for 20 min (silent since <!date^',
    'heard-again': ':ear: Heard from *prod* — `prod/shop/checkout` again after silence since',
    'hook-pinned': 'is still Running with PostSync hooks while the Rollout is paused',
    'appset-out-of-order': ':x: *prod* — `prod/shop/checkout`: an ApplicationSet step started out of order. ProgressDeadlineExceeded',
    'stage-healthy': ':white_check_mark: *prod* — `prod/shop/checkout` is Healthy for this release.',
    'release-complete': ':tada: Release `rel-5` is complete',
    'mixed-stage': ':warning: *prod* — `prod/shop/checkout` selects targets of other releases too.',
    'promotion-failed': ':x: *prod* — `prod/shop/checkout`: the Kargo Promotion failed.\n>ProgressDeadlineExceeded',
    'verification-failed': 'the verification of the Freight ended Failed; the Freight does not move on from here.\n>ProgressDeadlineExceeded',
  };
  for (const [kind, fragment] of Object.entries(expected) as [ReplyKind, string][]) {
    it(`renders a ${kind} reply`, () => {
      const detail = {
        message: 'ProgressDeadlineExceeded',
        revision: 'abc123',
        retryCount: 3,
        stepIndex: 1,
        stepCount: 4,
        images: ['registry.example/checkout:hotfix'],
        silentSince: T0,
      };
      const msg = renderReply(reply(kind, detail), record({ stall: { alertedAt: T0 + 20 * 60_000, silentSince: T0 } }));
      expect(text(msg)).toContain(fragment);
      expect(msg.blocks.some((b) => b.type === 'actions')).toBe(kind === 'paused');
      expect(msg.text.length).toBeGreaterThan(0);
      expectWithinSlackLimits(msg.blocks, msg.text);
    });
  }

  it('offers Promote on a healthy stage whose next stage is a Kargo Stage (the reducer says which), naming both and the Freight; nowhere else', () => {
    const msg = renderReply(reply('stage-healthy', { promoteTo: 'prod', freight: 'f0e1d2c3' }, { stage: 'staging' }), record());
    const actions = msg.blocks.find((b) => b.type === 'actions') as { elements: { action_id: string; value: string; text: { text: string } }[] } | undefined;
    expect(actions?.elements.map((e) => [e.action_id, e.text.text])).toEqual([[PROMOTE_ACTION_ID, 'Promote to prod']]);
    expect(JSON.parse(actions!.elements[0]!.value)).toEqual({ v: 1, p: 'checkout', r: 'rel-5', st: 'prod', from: 'staging', fr: 'f0e1d2c3' });
    // A next stage that is not Kargo (the reducer sets no promoteTo), and the last stage: no button.
    expect(renderReply(reply('stage-healthy', {}, { stage: 'staging' }), record()).blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(renderReply(reply('stage-healthy', {}, { stage: 'prod' }), record()).blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('names a failed PromotionRequest for what it is, with its phase, the failing Target and its child Promotion; a Promotion stays a Promotion', () => {
    const request = reply('promotion-failed', {
      promotion: 'fleet.01k.f0e1d2c',
      via: 'PromotionRequest',
      phase: 'Failed',
      failedTarget: { name: 'us-1', promotion: 'fleet.us-1.01k.f0e1d2c', phase: 'Failed' },
      step: 'step-1',
      message: 'git push refused <!channel>',
    });
    const said = text(renderReply(request, record()));
    expect(said).toBe(':x: *prod* — `prod/shop/checkout`: the Kargo PromotionRequest `fleet.01k.f0e1d2c` failed (phase Failed): Target `us-1` (child Promotion `fleet.us-1.01k.f0e1d2c`) failed at step `step-1`.\n>git push refused &lt;!channel&gt;');
    expect(text(renderReply(reply('promotion-failed', { promotion: 'fleet.01k.f0e1d2c', via: 'PromotionRequest', phase: 'Errored' }), record()))).toBe(
      ':x: *prod* — `prod/shop/checkout`: the Kargo PromotionRequest `fleet.01k.f0e1d2c` errored (phase Errored).',
    );
    expect(text(renderReply(reply('promotion-failed', { promotion: 'dev.01k.f0e1d2c', phase: 'Failed', step: 'update-image' }), record()))).toBe(
      ':x: *prod* — `prod/shop/checkout`: the Kargo Promotion `dev.01k.f0e1d2c` failed at step `update-image`.',
    );
  });

  it('tells how to roll back after an abort (git, not undo)', () => {
    expect(text(renderReply(reply('aborted'), record()))).toContain('Revert the change in git to roll back.');
  });

  it('renders the same effect identically every time', () => {
    const e = reply('paused', { generation: 1, stepIndex: 0, stepCount: 2 });
    expect(renderReply(e, record())).toEqual(renderReply(structuredClone(e), structuredClone(record())));
  });

  it('escapes a Rollout or Argo CD message that tries to ping the channel', () => {
    for (const kind of Object.keys(expected) as ReplyKind[]) {
      const msg = renderReply(
        reply(kind, { message: '<!channel> deploy broke <@U123> <!subteam^S1>', images: ['<!here>'], revision: '<!everyone>' }, { stage: '<!channel>' }),
        record({ releaseId: '<!channel>' }),
      );
      expectNoPings(msg.blocks);
      expect(msg.text).not.toMatch(/<[!@#]/);
    }
  });

  it('bounds a 100 KB Argo CD error and says it was truncated', () => {
    const msg = renderReply(reply('sync-failed', { message: 'E'.repeat(100 * 1024), revision: 'r'.repeat(5000) }), record());
    expectWithinSlackLimits(msg.blocks, msg.text);
    expect(text(msg)).toContain(TRUNCATED);
  });

  it('keeps button values under 2,000 characters even with a huge release id', () => {
    const msg = renderReply(reply('paused', { generation: 1 }), record({ releaseId: 'r'.repeat(5000) }));
    expectWithinSlackLimits(msg.blocks, msg.text);
  });
});
