/** The watch's backoff (a pure function) and the Retry-After a 429/503 carries. */
import { describe, expect, it } from 'vitest';
import { backoffDelayMs, MAX_RETRY_AFTER_MS } from '../../src/facts/watch/backoff.js';
import { retryAfterMs, toKubeActionError } from '../../src/kube/errors.js';

const policy = { initialMs: 200, maxMs: 2_000 };

describe('watch backoff', () => {
  it('asks at once with no failure, then doubles from the initial delay up to the ceiling', () => {
    expect(backoffDelayMs(0, policy)).toBe(0);
    const top = (n: number) => backoffDelayMs(n, policy, undefined, () => 1);
    expect([1, 2, 3, 4, 5, 6, 50, 5_000].map(top)).toEqual([200, 400, 800, 1_600, 2_000, 2_000, 2_000, 2_000]);
  });

  it('jitters within the upper half of each step, so a delay never falls below the previous step', () => {
    const low = (n: number) => backoffDelayMs(n, policy, undefined, () => 0);
    const high = (n: number) => backoffDelayMs(n, policy, undefined, () => 1);
    expect([1, 2, 3, 4, 5].map(low)).toEqual([100, 200, 400, 800, 1_000]);
    // Below the ceiling the steps do not overlap: the waits grow while the server keeps refusing.
    for (let n = 1; n < 4; n++) expect(low(n + 1)).toBeGreaterThanOrEqual(high(n));
    for (let i = 0; i < 200; i++) {
      const d = backoffDelayMs(3, policy);
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThanOrEqual(800);
    }
  });

  it('takes Retry-After as a floor, never shorter than the backoff, and bounded', () => {
    expect(backoffDelayMs(1, policy, 2_000, () => 1)).toBe(2_000);
    expect(backoffDelayMs(5, policy, 10, () => 1)).toBe(2_000);
    // Past the ceiling, up to MAX_RETRY_AFTER_MS: a server asking for a day is not believed.
    expect(backoffDelayMs(1, policy, 60_000, () => 1)).toBe(60_000);
    expect(backoffDelayMs(1, policy, 86_400_000, () => 1)).toBe(MAX_RETRY_AFTER_MS);
    expect(backoffDelayMs(0, policy, 1_000)).toBe(1_000);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, in any header case; ignores the unreadable', () => {
    expect(retryAfterMs({ 'retry-after': '2' })).toBe(2_000);
    expect(retryAfterMs({ 'Retry-After': ' 7 ' })).toBe(7_000);
    const now = Date.parse('2026-08-20T09:00:00Z');
    expect(retryAfterMs({ 'retry-after': 'Thu, 20 Aug 2026 09:00:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMs({})).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it('is carried by the KubeActionError of a 429 or 503 (client-node ApiException headers), not of other codes', () => {
    const call = { cluster: 'prod', verb: 'list', resource: 'rollouts', namespace: 'shop' };
    expect(toKubeActionError({ code: 429, body: '{}', headers: { 'retry-after': '3' } }, call).retryAfterMs).toBe(3_000);
    expect(toKubeActionError({ code: 503, body: '{}', headers: { 'retry-after': '1' } }, call).retryAfterMs).toBe(1_000);
    expect(toKubeActionError({ code: 500, body: '{}', headers: { 'retry-after': '1' } }, call).retryAfterMs).toBeUndefined();
    expect(toKubeActionError({ code: 429, body: '{}' }, call).retryAfterMs).toBeUndefined();
  });
});
