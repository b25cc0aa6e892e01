/**
 * Kargo's stageSelector grammar as Kargo reads it (akuity/kargo pkg/pattern/matcher.go at
 * 1c764767: `glob:` is bmatcuk/doublestar v4 Match, `regex:`/`regexp:` is Go's regexp.MatchString,
 * anything else an exact name). Glob cases are doublestar's own test table (doublestar_test.go,
 * the rows without `/`); the regex cases pin RE2 against JavaScript where the two differ.
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfigFile } from '../../src/config/file.js';
import { compileLabelSelector } from '../../src/model/label-selector.js';
import { compileStageName, describeSelection, selectsKargoStage, StageSelectorError, type KargoStageSelection } from '../../src/model/kargo-stage-selector.js';

const matches = (text: string, name: string) => compileStageName(text).matches(name);
const refusal = (text: string): string => {
  try {
    compileStageName(text);
  } catch (err) {
    expect(err).toBeInstanceOf(StageSelectorError);
    return (err as Error).message;
  }
  throw new Error(`${text} was accepted`);
};

describe('exact names', () => {
  it('match the one Stage of that name and nothing else', () => {
    const name = compileStageName('prod-eu');
    expect(name).toMatchObject({ kind: 'exact', exactName: 'prod-eu' });
    expect(['prod-eu', 'prod-eu-2', 'xprod-eu'].map((n) => name.matches(n))).toEqual([true, false, false]);
  });

  it('a prefix Kargo does not know, or a name Kubernetes would not take, is refused with how to write it', () => {
    expect(refusal('re:^prod')).toBe(`"re:^prod": "re:" is not a pattern Kargo knows; write an exact Stage name (prod-eu), glob:<pattern> (glob:prod-*, glob:prod-{eu,us}; the whole name must match) or regex:<RE2> (regex:^prod-; matches anywhere unless anchored)`);
    expect(refusal('Prod')).toMatch(/^"Prod" is not a Stage name \(lowercase letters, digits, "-" and ".", at most 253\); write an exact Stage name/);
    expect(refusal('prod-*')).toMatch(/^"prod-\*" is not a Stage name.*glob:<pattern>/);
  });
});

describe('glob: (doublestar, the whole name must match)', () => {
  // [pattern, name, matches] from doublestar's table.
  const table: [string, string, boolean][] = [
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*b*c*d*e*', 'axbxcxdxe', true],
    ['a*b?c*x', 'abxbbxdbxebxczzx', true],
    ['a*b?c*x', 'abxbbxdbxebxczzy', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[e-g]', 'abc', false],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abc', false],
    ['ab[^e-g]', 'abc', true],
    ['a\\*b', 'ab', false],
    ['a\\*b', 'a*b', true],
    ['[\\]a]', ']', true],
    ['[\\-]', '-', true],
    ['[x\\-]', 'x', true],
    ['[x\\-]', '-', true],
    ['[x\\-]', 'z', false],
    ['[-]', '-', true],
    ['[x-]', '-', true],
    ['[-x]', 'a', false],
    ['[a-b-d]', '-', true],
    ['[a-b-d]', 'c', false],
    ['[a-b-x]', 'x', true],
    ['*x', 'xxx', true],
    ['[abc123]', '1', true],
    ['[a-z0-9]', '1', true],
    ['{a,b}', 'b', true],
    ['{a,b}c', 'bc', true],
    ['{a,b}c', 'ac', true],
    ['{a,b}c', 'c', false],
    ['a{b,c{d,e}}f', 'acef', true],
    ['a{b,c{d,e}}f', 'acf', false],
    ['{,a}b', 'b', true],
  ];
  it.each(table)('glob:%s against %s → %s', (pattern, name, expected) => {
    expect(matches(`glob:${pattern}`, name)).toBe(expected);
  });

  it('is anchored at both ends and treats regex characters as themselves', () => {
    expect(matches('glob:prod-*', 'prod-eu')).toBe(true);
    expect(matches('glob:prod-*', 'preprod-eu')).toBe(false);
    expect(matches('glob:prod.eu', 'prod.eu')).toBe(true);
    expect(matches('glob:prod.eu', 'prodxeu')).toBe(false);
    expect(matches('glob:prod-{eu,us}', 'prod-ap')).toBe(false);
    expect(matches('glob:**', 'anything.at-all')).toBe(true);
  });

  it('refuses what doublestar.ValidatePattern refuses', () => {
    for (const bad of ['[', '[^', '[^bc', 'a[', '[]a]', '\\', 'a{b', 'a}b', '{a,{b}']) expect(refusal(`glob:${bad}`)).toMatch(new RegExp(`^"glob:${bad.replace(/[\\[\]{}^]/g, '\\$&')}": `));
    expect(refusal('glob:')).toBe('"glob:": the glob after "glob:" is empty, so it would match no Stage');
  });
});

describe('regex: and regexp: (Go RE2, matched anywhere unless anchored)', () => {
  it('matches anywhere in the name, as regexp.MatchString does', () => {
    expect(matches('regex:prod', 'preprod-eu')).toBe(true);
    expect(matches('regex:^prod-', 'preprod-eu')).toBe(false);
    expect(matches('regex:^prod-(eu|us)$', 'prod-us')).toBe(true);
    expect(matches('regex:^prod-(eu|us)$', 'prod-us-2')).toBe(false);
    expect(matches('regexp:^dev-[a-zA-Z0-9]*', 'dev-1')).toBe(true);
    expect(compileStageName('regexp:x').kind).toBe('regex');
  });

  it('reads RE2 spellings JavaScript reads differently', () => {
    expect(matches('regex:(?i)^PROD-', 'prod-eu')).toBe(true);
    expect(matches('regex:(?P<region>eu|us)$', 'prod-us')).toBe(true);
    expect(matches('regex:\\Aprod\\z', 'prod')).toBe(true);
    expect(matches('regex:\\Aprod\\z', 'prod-eu')).toBe(false);
    expect(matches('regex:^\\Qprod.eu\\E$', 'prod.eu')).toBe(true);
    expect(matches('regex:^\\Qprod.eu\\E$', 'prodxeu')).toBe(false);
    expect(matches('regex:^[[:alpha:]]+-[[:digit:]]$', 'prod-1')).toBe(true);
    expect(matches('regex:^[]a]', 'a')).toBe(true);
    expect(matches('regex:^prod-\\x{65}u$', 'prod-eu')).toBe(true);
  });

  it('refuses what RE2 refuses, and says how to write it', () => {
    expect(refusal('regex:^prod-(?!eu)')).toMatch(/lookahead and lookbehind .* are not RE2: Kargo would refuse the pattern$/);
    expect(refusal('regex:(a)\\1')).toMatch(/RE2 has no backreferences/);
    expect(refusal('regex:\\y')).toBe('"regex:\\y": "\\y" is not an escape RE2 knows');
    expect(refusal('regex:a{1001}')).toMatch(/RE2 repeats at most 1000 times/);
    expect(refusal('regex:[a-z')).toMatch(/never closed/);
    expect(refusal('regex:prod(')).toMatch(/^"regex:prod\(": /);
    expect(refusal('regex:a(?i)b')).toMatch(/flags are accepted only at the very start, e\.g\. regex:\(\?i\)\^prod-/);
    expect(refusal('regex:')).toBe('"regex:": the pattern after "regex:" is empty, so it would match every Stage; write regex:.* if that is meant');
  });
});

describe('a selection: name and labels ANDed, in one project', () => {
  const selection: KargoStageSelection = { project: 'kargo-demo', name: compileStageName('glob:prod-*'), labels: compileLabelSelector('tier=prod') };
  it('selects a Stage only when its project, name and labels all match', () => {
    expect(selectsKargoStage(selection, { namespace: 'kargo-demo', name: 'prod-eu', labels: { tier: 'prod' } })).toBe(true);
    expect(selectsKargoStage(selection, { namespace: 'kargo-demo', name: 'prod-eu', labels: { tier: 'canary' } })).toBe(false);
    expect(selectsKargoStage(selection, { namespace: 'kargo-demo', name: 'staging', labels: { tier: 'prod' } })).toBe(false);
    expect(selectsKargoStage(selection, { namespace: 'other', name: 'prod-eu', labels: { tier: 'prod' } })).toBe(false);
    expect(describeSelection(selection)).toBe('stage glob:prod-* with labels tier=prod in project kargo-demo');
  });
});

describe('a config holding compiled selections', () => {
  it('writes back out as what was written in, and parses again to the same selection (the sandbox writes its config.yaml)', () => {
    const text = 'clusters: [{ name: prod }]\npipelines:\n  - name: shop\n    channel: C0SHOP\n    stages:\n      - { name: prod, cluster: prod, kargo: { project: kargo-demo, stage: "glob:prod-*", selector: "tier=prod" } }\n';
    const parsed = parseConfigFile(text);
    expect(JSON.parse(JSON.stringify(parsed.pipelines[0]!.stages[0]!.kargo!.selection))).toEqual({ project: 'kargo-demo', name: 'glob:prod-*', labels: 'tier=prod' });
    const again = parseConfigFile(stringify(parsed)).pipelines[0]!.stages[0]!.kargo!.selection;
    expect(again.name).toMatchObject({ kind: 'glob', text: 'glob:prod-*' });
    expect(selectsKargoStage(again, { namespace: 'kargo-demo', name: 'prod-eu', labels: { tier: 'prod' } })).toBe(true);
  });
});
