/**
 * `status [pipeline | pipeline@stage | release]`: releases in flight and their stages, from the
 * release store; for Kargo stages also the current Freight, the last Promotion (phase, when, who)
 * and health, where Progressing after having been healthy (autoscaling) is not a failure.
 */
import { KubeActionError } from '../src/kube/errors.js';
import { getStage } from '../src/kube/reads.js';
import type { ReleaseRecord } from '../src/releases/record.js';
import { section } from './blocks.js';
import { splitWords, UsageError } from './parse.js';
import type { CommandContext, Subcommand } from './types.js';
import { stageByName, type StageRef } from './where.js';
import { exactStage } from './kargo-choice.js';

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
  return `*${record.pipeline}* release \`${record.releaseId}\` — ${record.status}\n${rows.join('\n')}`;
}

async function promotedBy(ctx: CommandContext, promotion: string): Promise<string | undefined> {
  const entries = await ctx.audit.list({ action: 'promote', limit: 200 });
  const hit = entries.find((e) => e.result === 'done' && (e.after as { promotion?: string } | undefined)?.promotion === promotion);
  return hit ? `<@${hit.actor.slackUserId}>` : undefined;
}

async function kargoLines(ctx: CommandContext, ref: StageRef): Promise<string[]> {
  const kargo = ref.stage.kargo!;
  const exact = exactStage(kargo.selection);
  const names = exact ? [exact] : (await ctx.kube.selectStages(ref.stage.cluster, kargo.selection)).map((s) => s.metadata.name);
  const lines: string[] = [];
  for (const name of names) {
    try {
      const stage = await getStage(ctx.clusters.api(ref.stage.cluster), kargo.project, name);
      const summary = await ctx.kube.stageHealth(ref.stage.cluster, kargo.project, name);
      const current = Object.values(stage.status?.freightHistory?.[0]?.items ?? {}).map((i) => i.name).filter(Boolean);
      const last = stage.status?.lastPromotion;
      const who = last?.name ? await promotedBy(ctx, last.name) : undefined;
      const when = last?.finishedAt ?? last?.status?.finishedAt;
      const promotion = last?.name ? `last Promotion \`${last.name}\` ${last.status?.phase ?? 'unknown phase'}${when ? ` at ${when}` : ''}${who ? ` by ${who}` : ''}` : 'never promoted';
      lines.push(
        `• Kargo \`${kargo.project}/${name}\`: Freight ${current.length > 0 ? current.map((c) => `\`${c}\``).join(', ') : 'none'}; ${promotion}; ` +
          `health now ${summary.healthNow ?? 'unknown'}; ${summary.healthySinceLastPromotion ? 'healthy at least once since that Promotion' : 'not healthy since that Promotion'} — ${summary.reason}`,
      );
    } catch (err) {
      lines.push(`• Kargo \`${kargo.project}/${name}\`: ${err instanceof KubeActionError ? err.message : String(err)}`);
    }
  }
  return lines;
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
      if (ref.stage.kargo) sections.push((await kargoLines(ctx, ref)).join('\n'));
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
