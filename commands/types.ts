/**
 * What a subcommand gets to work with. The Slack listener builds this per request (its contract
 * lives at the Slack edge, src/slack/listeners/command-port.ts); subcommands never see Bolt, so
 * they can be read (and tested) as plain functions of their words.
 */
import type { CommandContext } from '../src/slack/listeners/command-port.js';

export type { CommandContext, CommandServices, SlackSurface, SlackText } from '../src/slack/listeners/command-port.js';
export type { ThreadLocator } from '../src/actions/types.js';

export interface Subcommand {
  name: string;
  /** One line: `approve <target>`. */
  usage: string;
  /** What it does, one sentence. */
  summary: string;
  examples: string[];
  run(ctx: CommandContext, text: string): Promise<void>;
}
