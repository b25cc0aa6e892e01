/**
 * `status [pipeline | pipeline@stage | release]`: releases in flight and their stages, from the
 * release store; for Kargo stages also what the thread would say of each Stage, the Freight it
 * holds and its current or last Promotion or PromotionRequest (status-kargo.ts).
 */
import { releaseDisplayName } from '../src/releases/display-name.js';
import type { ReleaseRecord } from '../src/releases/record.js';
import { code } from '../src/slack/render/mrkdwn.js';
import { section } from './blocks.js';
import { splitWords, UsageError } from './parse.js';
import { kargoStatusLines } from './status-kargo.js';
import type { Subcommand } from './types.js';
import { stageByName } from './where.js';

const NAME = 'status';
const STATUS_ICON: Record<string, string> = { Healthy: ':white_check_mark:', Progressing: ':arrows_counterclockwise:', Paused: ':double_vertical_bar:', Degraded: ':x:', Aborted: ':no_entry:', Stalled: ':warning:', Waiting: ':white_circle:' };

function releaseLines(record: ReleaseRecord, only?: string): string {
  const stages = record.stages.filter((s) => !only || s.name === only);
  const rows = stages.map((s) => {
    const targets = Object.values(s.targets);
    const healthy = targets.filter((t) => t.phase === 'Healthy').length;
    const count = targets.length + s.pending.length;
    const paused = targets.filter((t) => t.phase === 'Paused').map((t) => `${t.ref.cluster}/${t.ref.namespace}/${t.ref.name}${t.step ? ` at step ${t.step.index + 1}${t.step.count ? `/${t.step.count}` : ''}` : ''}`);
    const extra = paused.length > 0 ? ` — waiting for approval: ${paused.join(', ')}` : '';
    return `   ${STATUS_ICON[s.status] ?? ''} ${s.name}: ${s.status}${count > 0 ? ` (${healthy}/${count} Healthy)` : ''}${s.healthyAt ? ', healthy at least once' : ''}${extra}`;
  });
  return `*${record.pipeline}* release ${code(releaseDisplayName(record), 120)} — ${record.status}\n${rows.join('\n')}`;
}

export const status: Subcommand = {
  name: NAME,
  usage: 'status [pipeline | pipeline@stage | release-id]',
  summary: 'Releases in flight and their stages; for Kargo stages the current Freight, the last Promotion and health since it.',
  examples: ['/glidepath status', '/glidepath status checkout', '/glidepath status shop@prod'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, [], []);
    if (words.positional.length > 1) throw new UsageError('name at most one pipeline, stage or release', NAME);
    const arg = words.positional[0];
    const sections: string[] = [];
    if (arg?.includes('@')) {
      const [p, s] = arg.split('@') as [string, string];
      const ref = stageByName(ctx.config, p, s, NAME);
      for (const r of await ctx.releases.list(p, { limit: 5 })) sections.push(releaseLines(r, s));
      if (ref.stage.kargo) sections.push((await kargoStatusLines(ctx, ref)).join('\n'));
      if (sections.length === 0) sections.push(`No release of ${p} in flight has reached ${s}.`);
    } else if (arg && ctx.config.pipelines.some((p) => p.name === arg)) {
      const records = await ctx.releases.list(arg, { limit: 10 });
      sections.push(...records.map((r) => releaseLines(r)));
      if (records.length === 0) sections.push(`No release of ${arg} is in flight.`);
    } else if (arg) {
      for (const p of ctx.config.pipelines) {
        const r = await ctx.releases.get(p.name, arg);
        if (r) sections.push(releaseLines(r));
      }
      if (sections.length === 0) throw new UsageError(`"${arg}" is neither a pipeline (${ctx.config.pipelines.map((p) => p.name).join(', ')}) nor a known release id`, NAME);
    } else {
      for (const p of ctx.config.pipelines) sections.push(...(await ctx.releases.list(p.name, { limit: 5 })).map((r) => releaseLines(r)));
      if (sections.length === 0) sections.push('No release is in flight.');
    }
    const body = sections.join('\n\n');
    await ctx.slack.reply({ text: body, blocks: sections.slice(0, 40).map((s) => section(s)) });
  },
};
