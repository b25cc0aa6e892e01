/**
 * `status [pipeline | pipeline@stage | release]`: releases in flight and their stages, from the
 * release store; for Kargo stages also what the thread would say of each Stage, the Freight it
 * holds and its current or last Promotion or PromotionRequest (status-kargo.ts).
 */
import { releaseDisplayName } from '../src/releases/record/display-name.js';
import type { ReleaseRecord } from '../src/releases/record/record.js';
import { code } from '../src/text/mrkdwn.js';
import { mixedStageStatusLine } from '../src/slack/render/mixed-stage.js';
import type { ConfigFile } from '../src/config/file.js';
import { section } from './blocks.js';
import { splitWords, UsageError } from './parse.js';
import { kargoStatusLines } from './status-kargo.js';
import { channelProblemsSection, generatedPipelinesSection, originLine } from './status-pipelines.js';
import type { CommandContext, Subcommand } from './types.js';
import { stageByName } from './where.js';

const NAME = 'status';
const STATUS_ICON: Record<string, string> = { Healthy: ':white_check_mark:', Progressing: ':arrows_counterclockwise:', Paused: ':double_vertical_bar:', Degraded: ':x:', Aborted: ':no_entry:', Stalled: ':warning:', Waiting: ':white_circle:' };

/** The config's selector of a stage, which a split of a stage that mixes apps adds the app label to. */
function selectorText(config: ConfigFile, pipeline: string, stage: string): string | undefined {
  const s = config.pipelines.find((p) => p.name === pipeline)?.stages.find((x) => x.name === stage);
  return s?.rollouts?.selector.text ?? s?.applications?.selector.text;
}

function releaseLines(config: ConfigFile, record: ReleaseRecord, only?: string): string {
  const stages = record.stages.filter((s) => !only || s.name === only);
  const rows = stages.map((s) => {
    const targets = Object.values(s.targets);
    const healthy = targets.filter((t) => t.phase === 'Healthy').length;
    const count = targets.length + s.pending.length;
    const paused = targets.filter((t) => t.phase === 'Paused').map((t) => `${t.ref.cluster}/${t.ref.namespace}/${t.ref.name}${t.step ? ` at step ${t.step.index + 1}${t.step.count ? `/${t.step.count}` : ''}` : ''}`);
    const extra = paused.length > 0 ? ` — waiting for approval: ${paused.join(', ')}` : '';
    const row = `   ${STATUS_ICON[s.status] ?? ''} ${s.name}: ${s.status}${count > 0 ? ` (${healthy}/${count} Healthy)` : ''}${s.healthyAt ? ', healthy at least once' : ''}${extra}`;
    return s.otherReleases ? `${row}\n${mixedStageStatusLine(s.name, s.otherReleases, selectorText(config, record.pipeline, s.name))}` : row;
  });
  return `*${record.pipeline}* release ${code(releaseDisplayName(record), 120)} — ${record.status}\n${rows.join('\n')}`;
}

/**
 * A stage that mixes apps is a fact about the config, not about one release: it is told after the
 * releases that showed it finished too, from the pipeline's newest release (finished or not), unless
 * a release listed already said it.
 */
async function mixedStageLines(ctx: CommandContext, pipeline: string, shown: readonly ReleaseRecord[], only?: string): Promise<string[]> {
  const mixes = (r: ReleaseRecord) => r.stages.some((s) => s.otherReleases && (!only || s.name === only));
  if (shown.some((r) => r.pipeline === pipeline && mixes(r))) return [];
  const [newest] = await ctx.releases.list(pipeline, { includeFinished: true, limit: 1 });
  if (!newest || !mixes(newest)) return [];
  const lines = newest.stages.flatMap((s) => (s.otherReleases && (!only || s.name === only) ? [mixedStageStatusLine(s.name, s.otherReleases, selectorText(ctx.config, pipeline, s.name))] : []));
  return [`*${pipeline}*: a stage mixes apps (seen by release ${code(releaseDisplayName(newest), 120)}, ${newest.status})\n${lines.join('\n')}`];
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
      const records = await ctx.releases.list(p, { limit: 5 });
      sections.push(...records.map((r) => releaseLines(ctx.config, r, s)));
      if (ref.stage.kargo) sections.push((await kargoStatusLines(ctx, ref)).join('\n'));
      if (sections.length === 0) sections.push(`No release of ${p} in flight has reached ${s}.`);
      sections.push(...(await mixedStageLines(ctx, p, records, s)));
    } else if (arg && ctx.config.pipelines.some((p) => p.name === arg)) {
      const records = await ctx.releases.list(arg, { limit: 10 });
      const origin = originLine(ctx.config, arg);
      if (origin) sections.push(origin);
      sections.push(...records.map((r) => releaseLines(ctx.config, r)));
      if (records.length === 0) sections.push(`No release of ${arg} is in flight.`);
      sections.push(...(await mixedStageLines(ctx, arg, records)));
      const problems = await channelProblemsSection(ctx, arg);
      if (problems) sections.push(problems);
    } else if (arg) {
      for (const p of ctx.config.pipelines) {
        const r = await ctx.releases.get(p.name, arg);
        if (r) sections.push(releaseLines(ctx.config, r));
      }
      if (sections.length === 0) throw new UsageError(`"${arg}" is neither a pipeline (${ctx.config.pipelines.map((p) => p.name).join(', ')}) nor a known release id`, NAME);
    } else {
      const mixed: string[] = [];
      for (const p of ctx.config.pipelines) {
        const records = await ctx.releases.list(p.name, { limit: 5 });
        sections.push(...records.map((r) => releaseLines(ctx.config, r)));
        mixed.push(...(await mixedStageLines(ctx, p.name, records)));
      }
      if (sections.length === 0) sections.push('No release is in flight.');
      sections.push(...mixed);
      const pipelines = generatedPipelinesSection(ctx.config);
      if (pipelines) sections.push(pipelines);
      const problems = await channelProblemsSection(ctx);
      if (problems) sections.push(problems);
    }
    const body = sections.join('\n\n');
    await ctx.slack.reply({ text: body, blocks: sections.slice(0, 40).map((s) => section(s)) });
  },
};
