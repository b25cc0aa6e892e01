/** The usage text people see for `help`, for a mistake, and for an unknown subcommand. */
import { SUBCOMMANDS } from './registry.js';
import type { SlackText, Subcommand } from './types.js';
import { escapeMrkdwn } from '../src/text/mrkdwn.js';

// Usage is written with <placeholders>; Slack reads `<…|…>` as a link even inside backticks
// (`approve <pipeline@stage | …>` became a mailto link), so every < > & is escaped.
const u = escapeMrkdwn;

export function usageOf(sub: Subcommand, problem?: string): SlackText {
  const lines = [
    ...(problem ? [`:warning: ${problem}`] : []),
    `*Usage:* \`/glidepath ${u(sub.usage)}\``,
    u(sub.summary),
    `*Example${sub.examples.length > 1 ? 's' : ''}:* ${sub.examples.map((e) => `\`${u(e)}\``).join('  ')}`,
  ];
  return { text: lines.join('\n') };
}

export function generalHelp(problem?: string): SlackText {
  const lines = [
    ...(problem ? [`:warning: ${problem}`] : []),
    '*Glidepath* — `/glidepath &lt;subcommand&gt;`:',
    ...SUBCOMMANDS.map((s) => `• \`${u(s.usage)}\` — ${u(s.summary)}`),
    'Targets: `pipeline@stage`, `cluster/namespace/rollout`, `cluster/namespace/appset`. `/glidepath help &lt;subcommand&gt;` shows examples.',
  ];
  return { text: lines.join('\n') };
}
