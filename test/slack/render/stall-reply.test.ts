/**
 * The stall reply says what may really be wrong for the quiet stage's source (a notification lost,
 * Glidepath's watch of the cluster, the controller), and that a release waiting for a person waits
 * besides: a wait is never told as a lost notification.
 */
import { describe, expect, it } from 'vitest';
import type { ReplyDetail } from '../../../src/releases/record/record.js';
import { renderReply } from '../../../src/slack/render/reply.js';
import { record, reply, T0 } from '../support/records.js';
import { expectNoPings, expectWithinSlackLimits } from './limits.js';

function stall(detail: ReplyDetail, minutes = 20): string {
  const msg = renderReply({ ...reply('stall', { silentSince: T0, ...detail }), target: undefined, stage: undefined }, record({ pipeline: 'checkout-kargo', stall: { alertedAt: T0 + minutes * 60_000, silentSince: T0 } }));
  expectWithinSlackLimits(msg.blocks, msg.text);
  expectNoPings(msg.blocks);
  const first = msg.blocks[0];
  if (first?.type !== 'section') throw new Error('a reply starts with a section');
  return first.text.text.replace(/<!date\^[^>]+>/, 'DATE');
}

describe('the stall reply, per source', () => {
  const src = (facts: 'webhook' | 'watch' | 'both', follows: 'rollouts' | 'applications' | 'applicationSet' | 'kargo') => ({ stall: { source: { cluster: 'prod', facts, follows } } });

  it('webhook: the notifications of what the stage follows may have been lost', () => {
    expect(stall(src('webhook', 'rollouts'))).toBe(':warning: No fact from *checkout-kargo* for 20 min (silent since DATE); the Rollouts notifications may have been lost.');
    expect(stall(src('webhook', 'applications'))).toContain('; the Argo CD notifications may have been lost.');
    // Records from before the source was kept say what they always said.
    expect(stall({})).toContain('; the Rollouts notifications may have been lost.');
  });

  it('watch: Glidepath\'s watch of the cluster may be down, or the controller is not reconciling; never a lost notification', () => {
    expect(stall(src('watch', 'kargo'))).toBe(
      ":warning: No fact from *checkout-kargo* for 20 min (silent since DATE); Glidepath's watch of cluster `prod` may be down (a working watch hears every object it follows at each relist), or Kargo's controller is not reconciling.",
    );
    expect(stall(src('watch', 'applicationSet'))).toContain('or the ApplicationSet controller is not reconciling.');
    expect(stall(src('both', 'kargo'))).toContain("Glidepath's watch of cluster `prod` may be down");
    expect(stall(src('both', 'rollouts'))).toContain("; neither the Rollouts notifications nor Glidepath's watch of cluster `prod` said anything: the watch may be down and the notifications lost, or the Argo Rollouts controller is not reconciling.");
    for (const follows of ['rollouts', 'applications', 'applicationSet', 'kargo'] as const) expect(stall(src('watch', follows))).not.toContain('notifications');
  });

  it('a Kargo stage on a cluster that is not watched: nothing follows it, and the reply says how to fix that', () => {
    expect(stall(src('webhook', 'kargo'))).toContain('Kargo sends no notifications and Glidepath does not watch cluster `prod` (`facts: webhook`), so nothing follows this Kargo stage: set `facts: watch` (or `both`) for `prod`.');
  });

  it('a release that waits for a person says so besides the silence (a promotion, an approval); under a minute is said as such', () => {
    expect(stall({ stall: { ...src('watch', 'kargo').stall, awaiting: { kind: 'promotion', stage: 'staging' } } }, 0)).toBe(
      ":warning: No fact from *checkout-kargo* for under a minute (silent since DATE); Glidepath's watch of cluster `prod` may be down (a working watch hears every object it follows at each relist), or Kargo's controller is not reconciling. The release also waits for a person (the next step is a promotion to *staging*); that wait is not what this alert is about.",
    );
    expect(stall({ stall: { awaiting: { kind: 'approval', stage: 'dev' } } })).toContain(' The release also waits for a person (*dev* is paused for approval)');
  });
});
