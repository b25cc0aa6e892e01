/**
 * `stats [pipeline]`: the delivery figures of a pipeline (or of each) over 7 and 30 days, from
 * the daily roll-ups the worker keeps (src/releases/store/delivery-stats.ts); the App Home shows the same.
 */
import { deliveryText } from '../src/slack/render/delivery.js';
import { untrusted } from '../src/text/mrkdwn.js';
import { section } from './blocks.js';
import { splitWords, UsageError } from './parse.js';
import type { Subcommand } from './types.js';

const NAME = 'stats';
/** Pipelines answered for at once (each is 30 hash reads); more are named as a count. */
const PIPELINES_AT_ONCE = 20;

export const stats: Subcommand = {
  name: NAME,
  usage: 'stats [pipeline]',
  summary: 'Delivery figures over 7 and 30 days: releases started and completed, the share failed or aborted, median lead time and time to recover.',
  examples: ['/glidepath stats', '/glidepath stats checkout'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, [], []);
    if (words.positional.length > 1) throw new UsageError('name at most one pipeline', NAME);
    const arg = words.positional[0];
    const names = ctx.config.pipelines.map((p) => p.name);
    if (arg !== undefined && !names.includes(arg)) throw new UsageError(`there is no pipeline "${arg}" (pipelines: ${names.join(', ') || 'none'})`, NAME);
    if (!ctx.delivery) {
      await ctx.slack.reply({ text: 'Delivery figures are not kept by this Glidepath.' });
      return;
    }
    const asked = arg !== undefined ? [arg] : names.slice(0, PIPELINES_AT_ONCE);
    if (asked.length === 0) {
      await ctx.slack.reply({ text: 'No pipelines are configured.' });
      return;
    }
    const figures = await ctx.delivery.windowsOf(asked, (ctx.now ?? Date.now)());
    const sections = asked.map((name) => `*${untrusted(name, 63)}* delivery\n${deliveryText(figures.get(name)!)}`);
    if (names.length > asked.length) sections.push(`${names.length - asked.length} more pipelines: \`/glidepath stats &lt;pipeline&gt;\` shows any of them.`);
    await ctx.slack.reply({ text: sections.join('\n\n'), blocks: sections.map((s) => section(s)) });
  },
};
