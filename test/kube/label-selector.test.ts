import { describe, expect, it } from 'vitest';
import { LabelSelectorError, matchesExpressions, matchesLabels, parseLabelSelector } from '../../src/model/label-selector.js';

const labels = { 'app.kubernetes.io/part-of': 'checkout', env: 'prod', tier: 'web' };

describe('label selectors', () => {
  it.each([
    ['', true],
    ['env=prod', true],
    ['env==prod', true],
    ['env!=prod', false],
    ['env!=staging', true],
    ['env in (prod, staging)', true],
    ['env notin (prod)', false],
    ['tier', true],
    ['!tier', false],
    ['!canary', true],
    ['app.kubernetes.io/part-of=checkout,env=prod', true],
    ['app.kubernetes.io/part-of=checkout,env=staging', false],
    ['env in (dev,staging),tier=web', false],
    ['missing notin (x)', true],
    ['missing in (x)', false],
  ])('%s matches: %s', (selector, expected) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it.each(['app==', 'env=prod,', 'env in ()', 'bad key!=x', 'Env=-x-', 'a=b=c'])('rejects %s with a reason', (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(LabelSelectorError);
    expect(() => parseLabelSelector(selector)).toThrow(/invalid label selector/);
  });

  it('reads RollingSync matchExpressions like the ApplicationSet controller: In/NotIn ANDed, other operators match nothing', () => {
    expect(matchesExpressions(labels, [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }, { key: 'tier', operator: 'NotIn', values: ['db'] }])).toBe(true);
    expect(matchesExpressions(labels, [{ key: 'env', operator: 'In', values: ['dev'] }])).toBe(false);
    expect(matchesExpressions(labels, [{ key: 'missing', operator: 'NotIn', values: ['x'] }])).toBe(true);
    expect(matchesExpressions(labels, [{ key: 'missing', operator: 'In', values: ['x'] }])).toBe(false);
    expect(matchesExpressions(labels, [{ key: 'env', operator: 'Exists' }])).toBe(false);
  });
});

