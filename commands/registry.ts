/** Every `/glidepath` subcommand, in one list (the order of the general help). */
import { abort } from './abort.js';
import { approve } from './approve.js';
import { freshness } from './freshness.js';
import { promote } from './promote.js';
import { status } from './status.js';
import type { Subcommand } from './types.js';

export const SUBCOMMANDS: readonly Subcommand[] = [status, freshness, approve, abort, promote];

export function findSubcommand(name: string): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}
