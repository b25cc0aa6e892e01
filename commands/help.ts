/** The usage text people see for `help`, for a mistake, and for an unknown subcommand. */
import { SUBCOMMANDS } from './registry.js';
import type { SlackText, Subcommand } from './types.js';

export function usageOf(sub: Subcommand, problem?: string): SlackText {
  const lines = [
    ...(problem ? [`:warning: ${problem}`] : []),
    `*Usage:* \`/glidepath ${sub.usage}\``,
    sub.summary,
    `*Example${sub.examples.length > 1 ? 's' : ''}:* ${sub.examples.map((e) => `\`${e}\``).join('  ')}`,
  ];
  return { text: lines.join('\n') };
}

export function generalHelp(problem?: string): SlackText {
  const lines = [
    ...(problem ? [`:warning: ${problem}`] : []),
    '*Glidepath* — `/glidepath <subcommand>`:',
    ...SUBCOMMANDS.map((s) => `• \`${s.usage}\` — ${s.summary}`),
    'Targets: `pipeline@stage`, `cluster/namespace/rollout`, `cluster/namespace/appset`. `/glidepath help <subcommand>` shows examples.',
  ];
  return { text: lines.join('\n') };
}
