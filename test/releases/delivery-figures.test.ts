/** Delivery figures: the events the worker's batch step emits, and what the daily roll-ups add up to. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, emptyCounts, figuresOver, lastDays, median, parseDayRollup, type DayRollup } from '../../src/releases/store/delivery-figures.js';
import { utcDay } from '../../src/time/utc-day.js';
import type { DeliveryNote } from '../../src/releases/record/record.js';
import { humanDuration, sparkline } from '../../src/slack/render/delivery.js';
import { Harness } from '../helpers/reduce-harness.js';
import { testConfig } from '../helpers/pipeline.js';
import { CheckoutReleases, MINUTE } from '../helpers/delivery-releases.js';

const T0 = Date.parse('2026-11-20T09:00:00Z');

function notesOf(h: Harness, releaseId: string): DeliveryNote[] {
  return h.effects.flatMap((e) => (e.releaseId === releaseId && e.effect.type === 'delivery.note' ? [e.effect] : []));
}

describe('delivery notes from the worker batch step', () => {
  it('a release is started once at its first fact and completed once, with its lead time to the last stage healthy', () => {
    const h = new Harness(testConfig());
    const releases = new CheckoutReleases();
    for (const fact of releases.completes(1, T0, 20 * MINUTE)) h.apply(fact);
    // A heartbeat of the healthy Rollout again: nothing more is counted.
    for (const fact of releases.completes(1, T0 + 30 * MINUTE, 1).slice(3)) h.apply(fact);
    expect(h.record('rel-1')?.status).toBe('Complete');
    expect(notesOf(h, 'rel-1')).toEqual([
      { id: 'delivery:started', type: 'delivery.note', event: 'started', at: T0 },
      { id: 'delivery:completed', type: 'delivery.note', event: 'completed', at: T0 + 20 * MINUTE, leadMs: 20 * MINUTE },
    ]);
  });

  it('a release already healthy when first heard counts as completed, with no lead time (unknown, not 0 s)', () => {
    const h = new Harness(testConfig());
    for (const fact of new CheckoutReleases().healthyWhenFirstHeard(4, T0)) h.apply(fact);
    expect(h.record('rel-4')?.status).toBe('Complete');
    expect(notesOf(h, 'rel-4')).toEqual([
      { id: 'delivery:started', type: 'delivery.note', event: 'started', at: T0 },
      { id: 'delivery:completed', type: 'delivery.note', event: 'completed', at: T0 },
    ]);
  });

  it('a release that fails, and one that is aborted, each says so once, at the time of the fact', () => {
    const h = new Harness(testConfig());
    const releases = new CheckoutReleases();
    for (const fact of releases.fails(2, T0, 7 * MINUTE)) h.apply(fact);
    expect(h.record('rel-2')?.status).toBe('Failed');
    expect(notesOf(h, 'rel-2').map((n) => [n.event, n.at])).toEqual([['started', T0], ['failed', T0 + 7 * MINUTE]]);
    for (const fact of releases.aborted(3, T0 + DAY_MS, 3 * MINUTE)) h.apply(fact);
    expect(h.record('rel-3')?.status).toBe('Aborted');
    expect(notesOf(h, 'rel-3').map((n) => [n.event, n.at])).toEqual([['started', T0 + DAY_MS], ['aborted', T0 + DAY_MS + 3 * MINUTE]]);
  });
});

function day(daysAgo: number, now: number, fill: Partial<DayRollup['counts']> & { lead?: number[]; recovery?: number[] } = {}): DayRollup {
  const { lead = [], recovery = [], ...counts } = fill;
  return { day: utcDay(now - daysAgo * DAY_MS), counts: { ...emptyCounts(), ...counts }, leadMs: lead, recoveryMs: recovery };
}

describe('figures over 7 and 30 days', () => {
  it('median: the middle value, the mean of the two middle ones, none of nothing', () => {
    expect(median([])).toBeUndefined();
    expect(median([5])).toBe(5);
    expect(median([30, 10, 20])).toBe(20);
    expect(median([40, 10, 30, 20])).toBe(25);
    expect(median([1, 1, 1, 100])).toBe(1);
  });

  it('median: at least half the values are at or below it and at least half at or above', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 200 }), (values) => {
        const m = median(values)!;
        expect(values.filter((v) => v <= m).length * 2).toBeGreaterThanOrEqual(values.length);
        expect(values.filter((v) => v >= m).length * 2).toBeGreaterThanOrEqual(values.length);
        expect(m).toBeGreaterThanOrEqual(Math.min(...values));
        expect(m).toBeLessThanOrEqual(Math.max(...values));
      }),
    );
  });

  it('the week counts its 7 days and the month its 30; the share is of the releases that ended', () => {
    const now = Date.parse('2026-12-02T10:00:00Z');
    const rollups = lastDays(now, 30).map((_, i) => {
      if (i === 0) return day(0, now, { started: 2, completed: 1, failed: 1, ended: 2, troubled: 1, lead: [10 * MINUTE], recovery: [40 * MINUTE] });
      if (i === 6) return day(6, now, { started: 1, completed: 1, ended: 1, lead: [30 * MINUTE] });
      if (i === 7) return day(7, now, { started: 3, completed: 1, aborted: 2, ended: 3, troubled: 2, lead: [50 * MINUTE], recovery: [10 * MINUTE, 20 * MINUTE] });
      return day(i, now);
    });
    const week = figuresOver(rollups, 7);
    expect(week.counts).toMatchObject({ started: 3, completed: 2, failed: 1, aborted: 0, ended: 3, troubled: 1 });
    expect(week.failureShare).toBeCloseTo(1 / 3);
    expect(week.medianLeadMs).toBe(20 * MINUTE);
    expect(week.medianRecoveryMs).toBe(40 * MINUTE);
    expect(week.perDay.map((d) => d.day)).toEqual(lastDays(now, 7).reverse());
    const month = figuresOver(rollups, 30);
    expect(month.counts).toMatchObject({ started: 6, completed: 3, failed: 1, aborted: 2, ended: 6, troubled: 3 });
    expect(month.failureShare).toBe(0.5);
    expect(month.medianLeadMs).toBe(30 * MINUTE);
    expect(month.medianRecoveryMs).toBe(20 * MINUTE);
    const quiet = figuresOver(lastDays(now, 30).map((_, i) => day(i, now)), 7);
    expect([quiet.failureShare, quiet.medianLeadMs, quiet.medianRecoveryMs]).toEqual([undefined, undefined, undefined]);
  });

  it('a day read back from its hash: counters and durations, other fields ignored', () => {
    const r = parseDayRollup('2026-12-02', { started: '3', completed: '2', nlead: '2', 'lead:rel-1': '60000', 'lead:rel:2': '120000', 'rec:rel-2': '5000', junk: 'x', failed: 'NaN' });
    expect(r.counts).toMatchObject({ started: 3, completed: 2, failed: 0 });
    expect(r.leadMs.sort()).toEqual([120000, 60000].sort());
    expect(r.recoveryMs).toEqual([5000]);
  });

  it('days are UTC days, newest first', () => {
    expect(lastDays(Date.parse('2026-12-01T00:30:00Z'), 3)).toEqual(['2026-12-01', '2026-11-30', '2026-11-29']);
  });

  it('the chart and the durations in words', () => {
    expect(sparkline([0, 1, 2, 7, 0])).toBe('▁▂▃█▁');
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(humanDuration(45_000)).toBe('45s');
    expect(humanDuration(25 * MINUTE)).toBe('25m');
    expect(humanDuration(125 * MINUTE)).toBe('2h 5m');
    expect(humanDuration(3 * DAY_MS + 4 * 60 * MINUTE)).toBe('3d 4h');
  });
});
