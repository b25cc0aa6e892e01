/**
 * The out-of-order reply and the step rows, rendered from what the reducer derives: escaped and
 * bounded whatever the cluster says, even for an ApplicationSet of 20,000 children.
 */
import { describe, expect, it } from 'vitest';
import type { PipelineConfig } from '../../../src/config/file.js';
import type { AppSetState } from '../../../src/releases/record/appset-record.js';
import { appSetOrderFailures } from '../../../src/releases/reduce/appset-order.js';
import { renderParent } from '../../../src/slack/render/parent.js';
import { renderReply } from '../../../src/slack/render/reply.js';
import type { ThreadReplyEffect } from '../../../src/slack/render/types.js';
import { record, stage, target } from '../support/records.js';
import { expectNoPings, expectWithinSlackLimits } from './limits.js';

const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const pipeline: PipelineConfig = {
  name: 'checkout',
  channel: 'C0CHECKOUT',
  releaseIdAnnotation: 'hangar.io/release-id',
  stages: [1, 2].map((step) => ({ name: `step-${step}`, cluster: 'prod', applicationSet: { namespace: 'argocd', name: 'fleet', step } })),
};
const appSetRef = { kind: 'ApplicationSet' as const, cluster: 'prod', namespace: 'argocd', name: 'fleet' };

function fleet(children: number, hostile = ''): AppSetState {
  const members: AppSetState['members'] = {};
  members['fleet-0'] = { status: `Waiting${hostile}`, step: '1', targetRevisions: [REV] };
  for (let i = 1; i < children; i++) members[`fleet-${i}`] = { status: `Pending`, step: '2', targetRevisions: [`${REV}${hostile}`, REV] };
  return { ref: appSetRef, resourceVersion: '42', heardAt: 0, stepCount: 2, members };
}

function outOfOrder(appSet: AppSetState): { reply: ThreadReplyEffect; r: ReturnType<typeof record> } {
  const r = record({ releaseId: `revision-${REV.slice(0, 12)}`, revision: REV, appSets: { 'prod/argocd/appset:fleet': appSet }, stages: [stage('step-1', 'Progressing'), stage('step-2', 'Progressing', [], { stepProgress: { step: 2, stepCount: 2, known: true, members: 0, done: 0, revision: REV } })] });
  // The ApplicationSet's own status says step 1 Waiting and step 2 Pending: no wait for more evidence.
  const effects = appSetOrderFailures(r, pipeline, 0, 120_000);
  expect(effects).toHaveLength(1);
  return { reply: effects[0] as ThreadReplyEffect, r };
}

describe('an ApplicationSet step out of order, in Slack', () => {
  it('names the step, the child behind and the children that started, with revisions', () => {
    const { reply, r } = outOfOrder(fleet(3));
    const msg = renderReply(reply, r);
    const text = (msg.blocks[0] as { text: { text: string } }).text.text;
    expect(text).toBe(
      ':x: *step-2* — `prod/argocd/fleet`: RollingSync step 2 of `prod/argocd/fleet` started before step 1 was Healthy at `c0ffee1`. ' +
        'The ApplicationSet controller may have judged the earlier step on a stale cache or on a health that lags the sync (argo-cd#22558); the release is not done until every step is Healthy at its revisions.\n' +
        '*Not Healthy and Synced at `c0ffee1`:*\n• `fleet-0` (step 1): Waiting targeting `c0ffee1`\n' +
        '*Started (step 2):*\n• `fleet-1` (step 2): Pending targeting `c0ffee1`, `c0ffee1`\n• `fleet-2` (step 2): Pending targeting `c0ffee1`, `c0ffee1`',
    );
    expect(reply.needsPerson).toBe(true);
    // The row of the step that started says it failed.
    expect(r.stages[1]?.status).toBe('Degraded');
    const parent = JSON.stringify(renderParent(r, pipeline).blocks);
    expect(parent).toContain(':x: out of order: step 2 started before step 1 was Healthy at c0ffee1');
    expect(parent).toContain('step 2 of 2 · 0/0 Healthy at `c0ffee1`');
  });

  it('20,000 children: ten named, the rest counted; one message within Slack limits and no pings', () => {
    const { reply, r } = outOfOrder(fleet(20_000, '<!channel> <@U0BOSS>'));
    expect(reply.detail.outOfOrder?.started).toHaveLength(10);
    expect(reply.detail.outOfOrder?.moreStarted).toBe(19_989);
    const msg = renderReply(reply, r);
    expectWithinSlackLimits(msg.blocks, msg.text);
    expectNoPings(msg.blocks);
    expect(msg.blocks.length).toBeLessThanOrEqual(3);
    expect(JSON.stringify(msg.blocks)).toContain('and 19989 more');
  });

  it('a start seen on older word from the step behind waits for confirmation in the row, with no reply; past the grace, the reply', () => {
    // The ApplicationSet says fleet-0 Healthy and step 2 Pending since 09:00:10; fleet-0's own last word (OutOfSync) was compared at 09:00:01.
    const appSet: AppSetState = {
      ref: appSetRef,
      heardAt: 0,
      stepCount: 2,
      members: {
        'fleet-0': { status: 'Healthy', step: '1', targetRevisions: [REV], since: '2026-08-20T09:00:05Z' },
        'fleet-1': { status: 'Pending', step: '2', targetRevisions: [REV], since: '2026-08-20T09:00:10Z' },
      },
    };
    const child = target('fleet-0', { ref: { kind: 'Application', cluster: 'prod', namespace: 'argocd', name: 'fleet-0' }, revision: REV, syncStatus: 'OutOfSync', reconciledAt: '2026-08-20T09:00:01Z' });
    const progress = (step: number) => ({ step, stepCount: 2, known: true, members: 1, done: 0, revision: REV });
    const r = record({
      releaseId: `revision-${REV.slice(0, 12)}`,
      revision: REV,
      appSets: { 'prod/argocd/appset:fleet': appSet },
      stages: [stage('step-1', 'Progressing', [child], { stepProgress: progress(1) }), stage('step-2', 'Progressing', [], { stepProgress: progress(2) })],
    });
    expect(appSetOrderFailures(r, pipeline, 1_000, 120_000)).toEqual([]);
    expect(r.stages[1]?.status).toBe('Progressing');
    const parent = JSON.stringify(renderParent(r, pipeline).blocks);
    expect(parent).toContain(':hourglass_flowing_sand: waiting for confirmation: step 2 started before step 1 was seen Healthy at c0ffee1 (a delayed fact looks the same)');
    expect(parent).not.toContain(':x:');
    // The same, a grace later by fact time: the failure and its reply.
    const later = appSetOrderFailures(r, pipeline, 121_000, 120_000);
    expect(later).toHaveLength(1);
    expect(r.stages[1]?.status).toBe('Degraded');
    expect(JSON.stringify(renderParent(r, pipeline).blocks)).toContain(':x: out of order: step 2 started before step 1 was Healthy at c0ffee1');
  });
});
