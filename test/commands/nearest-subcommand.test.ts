/** "Did you mean": a mistyped subcommand gets the one it most likely meant, and only a near one. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nearestSubcommand, SUBCOMMANDS } from '../../commands/registry.js';

describe('nearestSubcommand', () => {
  it.each([
    ['aprove', 'approve'],
    ['approv', 'approve'],
    ['stauts', 'status'],
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
        expect(nearestSubcommand(typed)?.name).toBe(name);
      }),
    );
  });
});
