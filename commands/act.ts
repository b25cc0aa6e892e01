/**
 * The Slack side of the action engine (src/actions/): an outcome in words for the person who
 * asked. Every cluster-changing attempt is a request to `act` (src/actions/engine.ts), which asks
 * the gates, sends the write as the right identity, audits it once and tells the release thread.
 */
import type { Outcome } from '../src/actions/types.js';
import type { SlackText } from './types.js';

export type { Outcome } from '../src/actions/types.js';
export { act, threadLine } from '../src/actions/engine.js';

export type { ClickAnswer } from '../src/slack/listeners/command-port.js';

/** `--break-glass "why"`: override an open config freeze (the freeze gate, src/actions/freeze.ts). */
export type BreakGlass = { reason: string } | undefined;

/** The flag as typed; an empty reason still reaches the freeze gate, whose refusal says a reason is needed and how. */
export function breakGlassOf(flags: ReadonlyMap<string, string | true>): BreakGlass {
  const glass = flags.get('break-glass');
  return typeof glass === 'string' ? { reason: glass.slice(0, 500) } : undefined;
}

/** The request fields of an override (none without one). */
export function overriding(breakGlass: BreakGlass): { breakGlass?: true; reason?: string } {
  return breakGlass ? { breakGlass: true, reason: breakGlass.reason } : {};
}

/** An outcome in words, for the person who asked. */
export function outcomeMessage(outcome: Outcome<unknown>): SlackText {
  switch (outcome.kind) {
    case 'done':
      return { text: `:white_check_mark: ${outcome.summary}` };
    case 'first-approval':
      return { text: `:hourglass_flowing_sand: ${outcome.summary}` };
    case 'denied':
      return { text: `:no_entry: Not allowed: ${outcome.reason}` };
    case 'refused':
    case 'failed':
      return { text: `:x: ${outcome.reason}` };
  }
}
