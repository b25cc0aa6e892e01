/**
 * The stand-in API server's own label selector (sandbox/kube/label-selector.ts): the Kubernetes
 * grammar, checked here against expectations written from the Kubernetes semantics rather than
 * against Glidepath's parser, which the stand-in exists to test.
 */
import { describe, expect, it } from 'vitest';
import { parseSelector, selectorMatches, SelectorSyntaxError } from '../../sandbox/kube/label-selector.js';

const PROD_WEB = { env: 'prod', tier: 'web' };
const STAGING = { env: 'staging' };
const BARE = {};

describe('stand-in label selector', () => {
  it.each([
    ['', [true, true, true]],
    ['env=prod', [true, false, false]],
    ['env==prod', [true, false, false]],
    ['env = prod', [true, false, false]],
    ['env!=prod', [false, true, true]],
    ['env in (prod, staging)', [true, true, false]],
    ['env notin (prod,staging)', [false, false, true]],
    ['tier', [true, false, false]],
    ['!tier', [false, true, true]],
    ['env,!tier', [false, true, false]],
    ['env=prod,tier=web', [true, false, false]],
    ['env=', [false, false, false]],
    ['env in (staging,)', [false, true, false]],
    ['example.com/team', [false, false, false]],
  ])('%j selects the right objects', (selector, expected) => {
    const parsed = parseSelector(selector);
    expect([PROD_WEB, STAGING, BARE].map((labels) => selectorMatches(parsed, labels))).toEqual(expected);
  });

  it.each(['env in ()', 'env in (a', 'env in a', '=prod', 'env=prod=x', 'env=pr od', 'env>1', '-bad=x', 'a/b/c', 'env=prod,', '!', 'env notin'])(
    'refuses %j',
    (selector) => {
      expect(() => parseSelector(selector)).toThrow(SelectorSyntaxError);
    },
  );
});
