import { describe, expect, it } from 'vitest';
import { hasIllFormed, illFormedPath } from '../../src/model/unicode.js';

describe('hasIllFormed (the check every ingested body goes through)', () => {
  const lone = '\ud800';
  const bodies: [string, unknown, (string | number)[] | undefined][] = [
    ['a well-formed body with an emoji', { a: ['x', { b: '😀', c: [1, null, true] }] }, undefined],
    ['a lone surrogate in a nested value', { a: ['x', { b: `v${lone}` }] }, ['a', 1, 'b']],
    ['a lone surrogate in a key', { a: { [`k${lone}`]: 'v' } }, ['a', `k${lone}`]],
    ['a lone surrogate under a __proto__ key', JSON.parse(`{"__proto__": {"x": "\\ud800"}}`), ['__proto__', 'x']],
    ['a bare ill-formed string', lone, []],
    ['scalars only', [1, 2.5, null, false], undefined],
  ];
  it.each(bodies)('agrees with illFormedPath: %s', (_name, body, path) => {
    expect(hasIllFormed(body)).toBe(path !== undefined);
    expect(illFormedPath(body)).toEqual(path);
  });
});
