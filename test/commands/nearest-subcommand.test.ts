/** "Did you mean": a mistyped subcommand gets the one it most likely meant, and only a near one. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nearestSubcommand, SUBCOMMANDS } from '../../commands/registry.js';

/** Whether `a` is at most one insertion, deletion, substitution or adjacent swap from `b`. */
function oneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  const drops = (long: string, short: string) => [...long].some((_, i) => long.slice(0, i) + long.slice(i + 1) === short);
  if (a.length === b.length + 1) return drops(a, b);
  if (b.length === a.length + 1) return drops(b, a);
  if (a.length !== b.length) return false;
  const diff = [...a].flatMap((c, i) => (c === b[i] ? [] : [i]));
  return diff.length === 1 || (diff.length === 2 && diff[1] === (diff[0] as number) + 1 && a[diff[0] as number] === b[diff[1] as number] && a[diff[1] as number] === b[diff[0] as number]);
}

describe('nearestSubcommand', () => {
  it.each([
    ['aprove', 'approve'],
    ['approv', 'approve'],
    ['stauts', 'status'],
    ['stas', 'stats'],
    ['sttas', 'stats'],
    ['STATUS', 'status'],
    ['abrot', 'abort'],
    ['promot', 'promote'],
    ['fresh', 'freshness'],
    ['freshnes', 'freshness'],
  ])('%s → %s', (typed, meant) => {
    expect(nearestSubcommand(typed)?.name).toBe(meant);
  });

  it.each(['frobnicate', 'x', 'deploy', 'rollback', ''])('%s → nothing (no subcommand is near it)', (typed) => {
    expect(nearestSubcommand(typed)).toBeUndefined();
  });

  it('one edit away from any subcommand finds that subcommand', () => {
    const names = SUBCOMMANDS.map((s) => s.name);
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.nat(), fc.constantFrom('drop', 'double'), (name, at, how) => {
        const i = at % name.length;
        const typed = how === 'drop' ? name.slice(0, i) + name.slice(i + 1) : name.slice(0, i + 1) + name.slice(i);
        // `status` without its `u` is `stats`, and `statss` is one edit from either: only typos nearer one name than any other.
        fc.pre(!names.some((other) => other !== name && oneEdit(typed, other)));
        expect(nearestSubcommand(typed)?.name).toBe(name);
      }),
    );
  });
});
