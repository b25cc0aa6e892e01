import { describe, expect, it } from 'vitest';
import { parseDuration, parseTarget, splitWords, UsageError } from '../../commands/parse.js';

describe('command parsing', () => {
  it('reads the target forms people type', () => {
    expect(parseTarget('checkout@prod', 'approve')).toEqual({ kind: 'stage', pipeline: 'checkout', stage: 'prod' });
    expect(parseTarget('prod/shop/checkout', 'abort')).toEqual({ kind: 'object', cluster: 'prod', namespace: 'shop', name: 'checkout' });
  });

  it.each(['checkout', 'prod/shop', 'Prod/shop/x', 'a@b@c', '<!channel>'])('refuses %s with how to write a target', (text) => {
    expect(() => parseTarget(text, 'approve')).toThrow(UsageError);
    expect(() => parseTarget(text, 'approve')).toThrow(/pipeline@stage|not a target/);
  });

  it('reads flags with and without values, and quoted words', () => {
    const w = splitWords('checkout@prod --freight "my alias" --refresh --timeout=5m', 'x', ['freight', 'timeout'], ['refresh']);
    expect(w.positional).toEqual(['checkout@prod']);
    expect(Object.fromEntries(w.flags)).toEqual({ freight: 'my alias', refresh: true, timeout: '5m' });
  });

  it('names unknown options and missing values', () => {
    expect(() => splitWords('x --fast', 'promote', ['freight'], [])).toThrow('unknown option --fast (options: --freight)');
    expect(() => splitWords('x --freight', 'promote', ['freight'], [])).toThrow('--freight needs a value');
  });

  it('reads durations', () => {
    expect(parseDuration('90s', 'x')).toBe(90_000);
    expect(parseDuration('5m', 'x')).toBe(300_000);
    expect(() => parseDuration('5 minutes', 'x')).toThrow('"5 minutes" is not a duration: write 90s, 5m or 1h');
    expect(() => parseDuration('2h', 'x')).toThrow(/between 1s and 60m/);
  });
});
