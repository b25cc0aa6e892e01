/** Every `/glidepath` subcommand, in one list (the order of the general help). */
import { abort } from './abort.js';
import { approve } from './approve.js';
import { freshness } from './freshness.js';
import { promote } from './promote.js';
import { reject } from './reject.js';
import { stats } from './stats.js';
import { status } from './status.js';
import type { Subcommand } from './types.js';

export const SUBCOMMANDS: readonly Subcommand[] = [status, stats, freshness, approve, reject, abort, promote];

export function findSubcommand(name: string): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The subcommand a mistyped name most likely meant (`aprove` → approve, `stauts` → status): the
 * nearest by edit distance, if it is near enough to be a typo (at most 2 edits, and fewer than
 * half the name), or the one the name is a prefix of (`fresh` → freshness).
 */
export function nearestSubcommand(typed: string): Subcommand | undefined {
  const name = typed.toLowerCase().slice(0, 40);
  if (name === '') return undefined;
  const exact = findSubcommand(name);
  if (exact) return exact;
  const prefixed = SUBCOMMANDS.filter((s) => s.name.startsWith(name) && name.length >= 3);
  if (prefixed.length === 1) return prefixed[0];
  let best: { sub: Subcommand; d: number } | undefined;
  for (const sub of SUBCOMMANDS) {
    const d = distance(name, sub.name);
    if (!best || d < best.d) best = { sub, d };
  }
  return best && best.d <= 2 && best.d * 2 < best.sub.name.length ? best.sub : undefined;
}
