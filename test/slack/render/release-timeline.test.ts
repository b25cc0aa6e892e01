/**
 * The release timeline, pure: what the reducer keeps per stage (timeline.ts) from a Rollout's
 * observations, and the chart model drawn from a record (release-timeline.ts): a row per stage and
 * per canary step, bars to healthy or to the failure, waits for people apart from pauses, and who
 * ended a wait, by name.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { targetKey } from '../../../src/facts/fact.js';
import { resumeActionKey } from '../../../src/releases/reduce/own-action-keys.js';
import type { StageState, TargetState } from '../../../src/releases/record/record.js';
import { MAX_TIMELINE_HOLDS, MAX_TIMELINE_STEPS, noteRolloutChange } from '../../../src/releases/reduce/timeline.js';
import { MAX_TIMELINE_ROWS, releaseTimeline, spanText, timelineObservedNothing } from '../../../src/slack/render/release-timeline.js';
import { TIMELINE_COLORS, TIMELINE_WIDTH, releaseTimelinePng, releaseTimelineSvg, timelineHeight } from '../../../src/slack/render/release-timeline-image.js';
import { readPngHeader } from '../support/png.js';
import { T0, record, stage, target } from '../support/records.js';
import { Harness, rolloutFact } from '../../helpers/reduce-harness.js';
import { rolloutBody } from '../../helpers/rollout-bodies.js';
import { testConfig } from '../../helpers/pipeline.js';

/** The image of the finished release below is kept here for a look (docs/images/release-timeline.png is a copy). */
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/charts/', import.meta.url));

const S = 1_000;
const at = (step: number, extra: Partial<TargetState> = {}): TargetState => target('checkout', { step: { index: step, count: 4 }, ...extra });
const approval = (step: number): Partial<TargetState> => ({ phase: 'Paused', pause: { reason: 'CanaryPauseStep' }, step: { index: step, count: 4 } });
const timedPause = (step: number): Partial<TargetState> => ({ phase: 'Paused', pause: { reason: 'CanaryPauseStep' }, step: { index: step, count: 4, label: 'pause: 30s' } });

/** A Rollout's observations at the given times, noted as the reducer notes them. */
function observe(s: StageState, seen: [number, TargetState][], ownActions?: Record<string, { key: string; user: string }[]>): StageState {
  let prev: TargetState | undefined;
  for (const [time, next] of seen) {
    noteRolloutChange(s, prev, next, time, { ownActions });
    prev = next;
  }
  return s;
}

describe('what the reducer keeps for the timeline', () => {
  it('the first fact, each step as first heard, a wait for approval and who approved it through Glidepath', () => {
    const key = targetKey(at(1).ref);
    const s = observe(
      stage('prod', 'Progressing'),
      [
        [T0, at(0)],
        [T0 + 5 * S, at(0)],
        [T0 + 10 * S, at(1, approval(1))],
        [T0 + 70 * S, at(2)],
        [T0 + 90 * S, at(3, timedPause(3))],
        [T0 + 120 * S, at(4, { phase: 'Healthy' })],
      ],
      { [key]: [{ key: resumeActionKey('6b8f7c9d5', 1), user: 'U0ALICE' }] },
    );
    expect(s.timeline!.startedAt).toBe(T0);
    expect(s.timeline!.steps.map((x) => [x.index, x.at])).toEqual([[0, T0], [1, T0 + 10 * S], [2, T0 + 70 * S], [3, T0 + 90 * S], [4, T0 + 120 * S]]);
    expect(s.timeline!.holds).toEqual([
      { target: 'checkout', kind: 'approval', step: 1, from: T0 + 10 * S, to: T0 + 70 * S, how: 'resumed', by: 'glidepath', user: 'U0ALICE' },
      { target: 'checkout', kind: 'pause', step: 3, from: T0 + 90 * S, to: T0 + 120 * S, how: 'resumed' },
    ]);
  });

  it('stays bounded however often a Rollout flaps between pause and step', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.boolean()), { minLength: 1, maxLength: 200 }), (seen) => {
        const s = observe(stage('prod', 'Progressing'), seen.map(([step, paused], i) => [T0 + i * S, at(step, paused ? approval(step) : {})]));
        expect(s.timeline!.steps.length).toBeLessThanOrEqual(MAX_TIMELINE_STEPS);
        expect(s.timeline!.holds.length).toBeLessThanOrEqual(MAX_TIMELINE_HOLDS);
        // At most one pause is open, and only while the Rollout is paused.
        const open = s.timeline!.holds.filter((h) => h.to === undefined);
        expect(open.length).toBe(seen[seen.length - 1]![1] ? 1 : 0);
        for (const h of s.timeline!.holds) expect(h.to === undefined || h.to >= h.from).toBe(true);
      }),
    );
  });
});

describe('the timeline chart of a record', () => {
  const names = new Map([['U0ALICE', 'Alice Approver']]);
  const finished = () => {
    const staging = observe(stage('staging', 'Healthy', [], { healthyAt: T0 + 40 * S }), [[T0, target('checkout-staging', { phase: 'Healthy' })]]);
    const prod = observe(stage('prod', 'Healthy', [], { healthyAt: T0 + 200 * S }), [
      [T0 + 50 * S, at(0)],
      [T0 + 60 * S, at(1, approval(1))],
      [T0 + 180 * S, at(2)],
      [T0 + 200 * S, at(4, { phase: 'Healthy' })],
    ], { [targetKey(at(1).ref)]: [{ key: resumeActionKey('6b8f7c9d5', 1), user: 'U0ALICE' }] });
    return record({ status: 'Complete', finishedAt: T0 + 200 * S, updatedAt: T0 + 200 * S, stages: [staging, prod] });
  };

  it('a row per stage and per step, bars to healthy, the wait on its step row with the approver by name', () => {
    const chart = releaseTimeline(finished(), names);
    expect(chart.rows.map((r) => [r.label, r.bar, (r.to - r.from) / S])).toEqual([
      ['staging', 'healthy', 40],
      ['prod', 'healthy', 150],
      ['step 1/4', 'step', 10],
      ['step 2/4', 'step', 120],
      ['step 3/4', 'step', 20],
    ]);
    expect(chart.marks).toEqual([{ row: 3, kind: 'approval', from: T0 + 60 * S, to: T0 + 180 * S, label: 'waited 2 min for approval, approved by Alice Approver' }]);
    expect(chart.start).toBe(T0);
    expect(chart.end).toBe(T0 + 200 * S);
    expect(chart.altText).toBe(
      'Timeline of release rel-5 of checkout (Complete), one bar per stage and canary step over 3 min 20 s. Stage staging: 40 s to healthy. Stage prod: 2 min 30 s to healthy. step 1/4: 10 s. step 2/4: 2 min (waited 2 min for approval, approved by Alice Approver). step 3/4: 20 s.',
    );
  });

  it('an approver Slack gave no name for is labelled with the user id; a wait nobody answered through Glidepath says so', () => {
    expect(releaseTimeline(finished()).marks[0]!.label).toBe('waited 2 min for approval, approved by U0ALICE');
    const outside = finished();
    outside.stages[1]!.timeline!.holds[0] = { ...outside.stages[1]!.timeline!.holds[0]!, by: 'outside', user: undefined };
    expect(releaseTimeline(outside).marks[0]!.label).toBe('waited 2 min for approval, resumed outside Glidepath');
  });

  it('a failed stage is drawn until the failure, a stage never reached has no bar and is named, a pause apart from a wait', () => {
    const prod = observe(stage('prod', 'Aborted'), [
      [T0 + 10 * S, at(0)],
      [T0 + 20 * S, at(1, timedPause(1))],
      [T0 + 50 * S, at(2)],
      [T0 + 65 * S, at(2, { aborted: true, phase: 'Degraded', message: 'RolloutAborted: metric "success-rate" assessed Failed' })],
    ]);
    const chart = releaseTimeline(record({ status: 'Aborted', updatedAt: T0 + 65 * S, stages: [prod, stage('eu', 'Waiting')] }));
    expect(chart.rows[0]).toMatchObject({ label: 'prod', bar: 'failed', from: T0 + 10 * S, to: T0 + 65 * S });
    expect(chart.marks).toEqual([{ row: 2, kind: 'pause', from: T0 + 20 * S, to: T0 + 50 * S, label: 'paused 30 s' }]);
    expect(chart.notStarted).toEqual(['eu']);
    expect(chart.altText).toContain('Stage prod: 55 s until it failed.');
    expect(chart.altText).toContain('Not started: eu.');
  });

  it('for any steps and pauses: rows within the axis, every mark on a drawn row inside its bar, rows bounded, alt text bounded', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.boolean(), fc.integer({ min: 1, max: 600 })), { minLength: 1, maxLength: 120 }), fc.boolean(), (seen, healthy) => {
        let time = T0;
        const observations: [number, TargetState][] = seen.map(([step, paused, gap]) => [(time += gap * S), at(step, paused ? approval(step) : {})]);
        const end = time + S;
        const s = observe(stage('prod', healthy ? 'Healthy' : 'Degraded', [], healthy ? { healthyAt: end } : {}), observations);
        const chart = releaseTimeline(record({ status: healthy ? 'Complete' : 'Failed', updatedAt: end, ...(healthy ? { finishedAt: end } : {}), stages: [s] }));
        expect(chart.rows.length).toBeLessThanOrEqual(MAX_TIMELINE_ROWS);
        expect(chart.rows[0]!.bar).toBe(healthy ? 'healthy' : 'failed');
        for (const r of chart.rows) expect(r.from >= chart.start && r.to <= chart.end && r.from <= r.to).toBe(true);
        for (const m of chart.marks) {
          const row = chart.rows[m.row]!;
          expect(m.from >= row.from && m.to <= chart.rows[0]!.to && m.from <= m.to).toBe(true);
        }
        expect(chart.altText.length).toBeLessThanOrEqual(1_000);
        expect(timelineHeight(chart)).toBeLessThan(1_000);
      }),
      { numRuns: 50 },
    );
  });

  it('a release whose first fact was already its healthy one says so, and has no image: nothing was heard in between', () => {
    // As the sandbox's ledger-3.4.1: deployed before Glidepath heard of it, first heard healthy.
    const h = new Harness(testConfig());
    h.apply(rolloutFact(rolloutBody({ generation: 1, rv: 100, releaseId: 'rel-1', podHash: 'aaa', stableRS: 'aaa', phase: 'Healthy', labels: { 'app.kubernetes.io/part-of': 'checkout', env: 'staging' } }), T0));
    const done = h.record('rel-1')!;
    const chart = releaseTimeline(done);
    expect(chart.rows.map((r) => [r.label, r.bar, r.to - r.from])).toEqual([['staging', 'healthy', 0]]);
    expect(timelineObservedNothing(chart)).toBe(true);
    expect(chart.altText).not.toMatch(/0 s/);
    expect(chart.altText).toContain('Stage staging: already healthy when first heard.');
    expect(chart.subtitle).toContain('already healthy when first heard');
    // One stage first heard healthy beside one that was watched to healthy: drawn, each row saying what is true.
    const watched = finished();
    watched.stages[0] = { ...watched.stages[0]!, healthyAt: T0 };
    const both = releaseTimeline(watched, names);
    expect(timelineObservedNothing(both)).toBe(false);
    expect(both.altText).toContain('over 3 min 20 s. Stage staging: already healthy when first heard. Stage prod: 2 min 30 s to healthy.');
  });

  it('spans read as a person says them', () => {
    expect([0, 45 * S, 60 * S, 200 * S, 3_900 * S].map(spanText)).toEqual(['0 s', '45 s', '1 min', '3 min 20 s', '1 h 5 min']);
  });

  it('the image draws the wait in its colour, the bars in theirs, and the approver label', async () => {
    const svg = releaseTimelineSvg(releaseTimeline(finished(), names));
    expect(svg).toContain(`fill="${TIMELINE_COLORS.approval}"`);
    expect(svg).toContain(`fill="${TIMELINE_COLORS.healthy}"`);
    expect(svg).toContain(`fill="${TIMELINE_COLORS.step}"`);
    expect(svg).toContain('approved by Alice Approver');
    const chart = releaseTimeline(finished(), names);
    const png = await releaseTimelinePng(chart);
    expect(readPngHeader(png)).toMatchObject({ width: TIMELINE_WIDTH, height: timelineHeight(chart) });
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(`${ARTIFACTS}release-timeline-model.png`, png);
  });
});
