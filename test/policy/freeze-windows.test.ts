/**
 * When a freeze window or an Argo CD sync window is open, as pure functions of the time: across
 * time zones, midnight and a DST change; Argo CD's CanSync for a manual sync; and the config's
 * `freezes:` checked at load.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configFileSchema } from '../../src/config/file.js';
import { openFreezes } from '../../src/actions/freeze.js';
import { formatInZone, openUntil, parseGoDuration, parseLocalTime, zoneOffsetMs } from '../../src/time/windows.js';
import { argoGlob, canSyncManually, windowApplies, type SyncWindow } from '../../src/policy/sync-windows.js';

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'America/St_Johns', 'Australia/Lord_Howe'];

describe('openUntil', () => {
  it('a nightly window across midnight, read in Berlin time: open from 22:00 to 02:00 local, closed outside', () => {
    const nightly = { kind: 'cron' as const, schedule: '0 22 * * *', durationMs: 4 * HOUR, timeZone: 'Europe/Berlin' };
    expect(openUntil(nightly, at('2026-12-02T22:30:00Z'))).toBe(at('2026-12-03T01:00:00Z'));
    expect(openUntil(nightly, at('2026-12-03T00:59:59Z'))).toBe(at('2026-12-03T01:00:00Z'));
    expect(openUntil(nightly, at('2026-12-03T01:00:00Z'))).toBeUndefined();
    expect(openUntil(nightly, at('2026-12-02T20:59:59Z'))).toBeUndefined();
    expect(openUntil(nightly, at('2026-12-02T21:00:00Z'))).toBe(at('2026-12-03T01:00:00Z'));
  });

  it('a Monday 09:00 window in Auckland opens on Sunday evening UTC', () => {
    const monday = { kind: 'cron' as const, schedule: '0 9 * * 1', durationMs: 2 * HOUR, timeZone: 'Pacific/Auckland' };
    // 2026-12-07 is a Monday; Auckland is UTC+13 in December.
    expect(openUntil(monday, at('2026-12-06T20:30:00Z'))).toBe(at('2026-12-06T22:00:00Z'));
    expect(openUntil(monday, at('2026-12-07T20:30:00Z'))).toBeUndefined();
  });

  it('across the spring DST change a 01:00 window keeps its two hours of real time', () => {
    const early = { kind: 'cron' as const, schedule: '0 1 * * *', durationMs: 2 * HOUR, timeZone: 'Europe/Berlin' };
    // 2026-03-29: 01:00 CET is 00:00Z; the clocks jump from 02:00 to 03:00 local.
    expect(openUntil(early, at('2026-03-29T01:30:00Z'))).toBe(at('2026-03-29T02:00:00Z'));
    expect(openUntil(early, at('2026-03-29T02:00:00Z'))).toBeUndefined();
  });

  it('occurrences that overlap read as one window, ending after the last', () => {
    const hourly = { kind: 'cron' as const, schedule: '0 * * * *', durationMs: 90 * 60_000, timeZone: 'UTC' };
    const until = openUntil(hourly, at('2026-12-02T10:15:00Z'))!;
    expect(until).toBeGreaterThan(at('2026-12-03T00:00:00Z'));
  });

  it('property: a daily window shorter than a day is open exactly while the local time is in [start, start + duration)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 1, max: 23 * 60 }), fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-12-31T00:00:00Z') }), (tz, hour, minute, minutes, now) => {
        const window = { kind: 'cron' as const, schedule: `${minute} ${hour} * * *`, durationMs: minutes * 60_000, timeZone: tz };
        const until = openUntil(window, now);
        if (until === undefined) return;
        expect(until).toBeGreaterThan(now);
        expect(until - now).toBeLessThanOrEqual(window.durationMs);
        // The window started at a local hour:minute, so its start reads as that in the zone.
        const start = until - window.durationMs;
        const local = new Date(start + zoneOffsetMs(start, tz));
        // A start a DST change skipped is moved by the change; every other start is exact.
        const skipped = zoneOffsetMs(start, tz) !== zoneOffsetMs(start - HOUR, tz);
        if (!skipped) expect([local.getUTCHours(), local.getUTCMinutes()]).toEqual([hour, minute]);
        expect(openUntil(window, until - 1)).toBe(until);
      }),
      { numRuns: 300 },
    );
  });

  it('property: in zones without DST, a daily window is open exactly when the local time of day is within duration after its start (both ways)', () => {
    const FIXED: Record<string, number> = { UTC: 0, 'Asia/Kolkata': 330, 'Asia/Tokyo': 540, 'Asia/Kathmandu': 345, 'America/Phoenix': -420 };
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(FIXED)), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 1, max: 23 * 60 }), fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-12-31T00:00:00Z') }), (tz, hour, minute, minutes, now) => {
        const window = { kind: 'cron' as const, schedule: `${minute} ${hour} * * *`, durationMs: minutes * 60_000, timeZone: tz };
        const dayMs = 86_400_000;
        const localMsOfDay = (((now + FIXED[tz]! * 60_000) % dayMs) + dayMs) % dayMs;
        const sinceStart = (localMsOfDay - (hour * 60 + minute) * 60_000 + dayMs) % dayMs;
        expect(openUntil(window, now)).toBe(sinceStart < window.durationMs ? now - sinceStart + window.durationMs : undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('property: a span is open in [start, end) only', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 }), (start, length, offset) => {
        const end = start + length;
        const now = start + offset;
        expect(openUntil({ kind: 'span', start, end }, now)).toBe(now >= start && now < end ? end : undefined);
      }),
    );
  });
});

describe('times and durations', () => {
  it('reads Go durations and refuses what Go would not take here', () => {
    expect(parseGoDuration('2h')).toBe(2 * HOUR);
    expect(parseGoDuration('1h30m')).toBe(90 * 60_000);
    expect(parseGoDuration('1.5h')).toBe(90 * 60_000);
    for (const bad of ['', '2', 'h', '2d', '-1h', '0s', '2h ', ' 2h']) expect(parseGoDuration(bad)).toBeUndefined();
  });

  it('reads a local time in its zone, or with its own offset', () => {
    expect(parseLocalTime('2026-11-27T16:00', 'Europe/Berlin')).toBe(at('2026-11-27T15:00:00Z'));
    expect(parseLocalTime('2026-08-20T16:00', 'Europe/Berlin')).toBe(at('2026-08-20T14:00:00Z'));
    expect(parseLocalTime('2026-11-27T16:00+05:30', 'Europe/Berlin')).toBe(at('2026-11-27T10:30:00Z'));
    expect(parseLocalTime('2026-02-30T10:00', 'UTC')).toBeUndefined();
    expect(parseLocalTime('27.11.2026 16:00', 'UTC')).toBeUndefined();
  });

  it('says the time of day on the same local day, the date as well on another', () => {
    const now = at('2026-11-27T12:00:00Z');
    expect(formatInZone(at('2026-11-27T15:00:00Z'), 'Europe/Berlin', now)).toBe('16:00 Europe/Berlin');
    expect(formatInZone(at('2026-11-27T23:30:00Z'), 'Europe/Berlin', now)).toBe('Sat 2026-11-28 00:30 Europe/Berlin');
  });
});

describe('Argo CD sync windows (CanSync for a manual sync)', () => {
  const now = at('2026-12-02T12:00:00Z');
  const openDeny: SyncWindow = { kind: 'deny', schedule: '0 11 * * *', duration: '3h', applications: ['*'] };
  const openAllow: SyncWindow = { kind: 'allow', schedule: '0 10 * * *', duration: '4h', applications: ['*'] };
  const closedAllow: SyncWindow = { kind: 'allow', schedule: '0 20 * * *', duration: '1h', applications: ['*'] };

  it('an open deny window holds, unless every open deny window allows manual syncs', () => {
    expect(canSyncManually([openDeny], now)).toMatchObject({ allowed: false, why: 'deny', until: at('2026-12-02T14:00:00Z') });
    expect(canSyncManually([{ ...openDeny, manualSync: true }], now)).toMatchObject({ allowed: true });
    expect(canSyncManually([{ ...openDeny, manualSync: true }, { ...openDeny, duration: '2h' }], now)).toMatchObject({ allowed: false, why: 'deny', until: at('2026-12-02T13:00:00Z') });
    // A deny beats an open allow.
    expect(canSyncManually([openDeny, openAllow], now)).toMatchObject({ allowed: false, why: 'deny' });
  });

  it('allow windows that all are closed hold, unless all allow manual syncs; an open one lets through', () => {
    expect(canSyncManually([closedAllow], now)).toMatchObject({ allowed: false, why: 'outside-allow', opens: at('2026-12-02T20:00:00Z') });
    expect(canSyncManually([{ ...closedAllow, manualSync: true }], now)).toMatchObject({ allowed: true });
    expect(canSyncManually([closedAllow, openAllow], now)).toMatchObject({ allowed: true });
    expect(canSyncManually([], now)).toEqual({ allowed: true });
  });

  it('a window Argo CD cannot read holds the sync, as Argo CD does', () => {
    expect(canSyncManually([{ ...openDeny, schedule: 'every day' }], now)).toMatchObject({ allowed: false, why: 'invalid' });
    expect(canSyncManually([{ ...openDeny, duration: '3 hours' }], now)).toMatchObject({ allowed: false, why: 'invalid' });
  });

  it('applies by application, cluster (name or server) or namespace glob; OR unless andOperator; no lists, no match', () => {
    const app = { name: 'checkout-prod', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop-prod' } };
    expect(windowApplies({ kind: 'deny', applications: ['checkout-*'] }, app)).toBe(true);
    expect(windowApplies({ kind: 'deny', clusters: ['https://*.svc'] }, app)).toBe(true);
    expect(windowApplies({ kind: 'deny', namespaces: ['shop-{dev,prod}'] }, app)).toBe(true);
    expect(windowApplies({ kind: 'deny', applications: ['billing-*'], namespaces: ['shop-*'] }, app)).toBe(true);
    expect(windowApplies({ kind: 'deny', applications: ['billing-*'], namespaces: ['shop-*'], andOperator: true }, app)).toBe(false);
    expect(windowApplies({ kind: 'deny', applications: ['checkout-?rod'], namespaces: ['shop-*'], andOperator: true }, app)).toBe(true);
    expect(windowApplies({ kind: 'deny' }, app)).toBe(false);
    expect(argoGlob('a.b').test('aXb')).toBe(false);
  });
});

describe('freezes: in the config', () => {
  const base = { clusters: [{ name: 'prod' }], pipelines: [{ name: 'checkout', channel: 'C0CHECKOUT', stages: [{ name: 'prod-eu', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app=checkout' } }] }] };
  const problems = (freeze: Record<string, unknown>) => {
    const result = configFileSchema.safeParse({ ...base, freezes: [{ name: 'f', reason: 'r', ...freeze }] });
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('refuses an unknown time zone, both kinds of window at once, half a pair, an end before the start, a bad glob', () => {
    expect(problems({ timeZone: 'Europe/Berlim', schedule: '0 9 * * *', duration: '1h' })).toEqual(['freezes.0.timeZone: must be an IANA time zone such as Europe/Berlin or UTC']);
    expect(problems({ schedule: '0 9 * * *', duration: '1h', start: '2026-01-01T00:00', end: '2026-01-02T00:00' })[0]).toContain('either recurring');
    expect(problems({ schedule: '0 9 * * *' })[0]).toContain('needs both schedule and duration');
    expect(problems({ start: '2026-01-02T00:00', end: '2026-01-01T00:00' })).toEqual(['freezes.0.end: end must be after start']);
    expect(problems({ schedule: '0 9 * *', duration: '1h' })[0]).toContain('cron schedule of 5 fields');
    expect(problems({ schedule: '0 9 * * *', duration: '1h', stages: ['glob:prod-{eu'] }).length).toBe(1);
    expect(problems({ schedule: '0 9 * * *', duration: '1h', stages: ['glob:prod-*'] })).toEqual([]);
  });

  it('a freeze covers the pipelines and stages it names, by name or glob:', () => {
    const config = configFileSchema.parse({ ...base, freezes: [{ name: 'f', reason: 'r', start: '2026-01-01T00:00', end: '2026-01-02T00:00', stages: ['glob:prod-*'] }] });
    const inside = at('2026-01-01T12:00:00Z');
    expect(openFreezes(config.freezes, { pipeline: 'checkout', stage: 'prod-eu' }, inside).map((o) => o.freeze.name)).toEqual(['f']);
    expect(openFreezes(config.freezes, { pipeline: 'checkout', stage: 'staging' }, inside)).toEqual([]);
    expect(openFreezes(config.freezes, { pipeline: 'checkout', stage: 'prod-eu' }, at('2026-01-02T00:00:00Z'))).toEqual([]);
  });
});
