/**
 * One `/glidepath …` request: picks the subcommand, runs it, and turns every mistake into its
 * usage and every cluster failure into a sentence; nothing reaches the person as a stack trace.
 */
import { KubeActionError } from '../src/kube/errors.js';
import { generalHelp, usageOf } from './help.js';
import { UsageError } from './parse.js';
import { findSubcommand, nearestSubcommand } from './registry.js';
import { untrusted } from '../src/text/mrkdwn.js';
import type { CommandContext } from './types.js';

/** What a person typed that is no subcommand, said back safely (no mention, no link), with the likely one. */
function noSuchSubcommand(typed: string): string {
  const meant = nearestSubcommand(typed);
  return `there is no subcommand "${untrusted(typed, 40, { oneLine: true })}"${meant ? `; did you mean \`${meant.name}\`?` : ''}`;
}

export async function dispatch(ctx: CommandContext, text: string): Promise<void> {
  const trimmed = text.trim();
  const [name = '', ...rest] = trimmed.split(/\s+/);
  const args = trimmed.slice(name.length).trim();
  if (name === '' || name === 'help') {
    const about = rest[0] ? findSubcommand(rest[0]) : undefined;
    await ctx.slack.reply(about ? usageOf(about) : generalHelp(rest[0] ? noSuchSubcommand(rest[0]) : undefined));
    return;
  }
  const sub = findSubcommand(name);
  if (!sub) {
    await ctx.slack.reply(generalHelp(noSuchSubcommand(name)));
    return;
  }
  if (rest[0] === 'help' || rest[0] === '--help') {
    await ctx.slack.reply(usageOf(sub));
    return;
  }
  try {
    await sub.run(ctx, args);
  } catch (err) {
    if (err instanceof UsageError) {
      const about = err.subcommand ? findSubcommand(err.subcommand) : undefined;
      // A usage error quotes what was typed: said back escaped, so `<!channel>` pings nobody.
      const problem = untrusted(err.message, 600);
      await ctx.slack.reply(about ? usageOf(about, problem) : generalHelp(problem));
    } else if (err instanceof KubeActionError) {
      await ctx.slack.reply({ text: `:x: ${err.message}` });
    } else {
      ctx.logger.error({ err, subcommand: name }, 'command failed');
      await ctx.slack.reply({ text: `:x: /glidepath ${name} failed unexpectedly; nothing more is known here, the Glidepath log has the details` });
    }
  }
}
