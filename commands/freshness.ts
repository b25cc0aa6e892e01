/**
 * `freshness <cluster/namespace/appset> [--refresh] [--timeout 5m]`: each child of an
 * ApplicationSet, fresh or stale and why, counts first. With --refresh, the stale ones are asked
 * to refresh, again in bounded rounds while they stay stale (docs/freshness.md), and one message
 * counts them up ("31/40 fresh") until all are fresh, the rounds are spent, or the timeout.
 */
import type { FreshnessReport } from '../src/kube/freshness.js';
import { progressText } from '../src/kube/freshness.js';
import { outcomeMessage } from './act.js';
import { parseDuration, parseTarget, splitWords, UsageError } from './parse.js';
import { refreshApplications, refreshOutcome } from './refresh.js';
import { releaseAtStage } from './releases.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { section } from './blocks.js';
import { stageByName, stagesOfObject, type StageRef } from './where.js';

const NAME = 'freshness';
const LISTED = 30;
/** chat.update is Tier 3: progress edits are spaced out, the final state is always written. */
const UPDATE_EVERY_MS = 1_000;

export function freshnessMessage(where: string, report: FreshnessReport, heading?: string): SlackText {
  const stale = report.stale;
  const head = heading ?? `*${where}*: ${progressText(report)}, ${stale.length} stale`;
  const lines = report.children.slice(0, LISTED).map((c) => (c.fresh ? `• :white_check_mark: \`${c.name}\` fresh` : `• :warning: \`${c.name}\` stale: ${c.reason ?? 'unknown'}`));
  const more = report.children.length > LISTED ? `\n…and ${report.children.length - LISTED} more (${stale.length} stale in all)` : '';
  const body = report.children.length === 0 ? 'The ApplicationSet has no child Applications.' : `${lines.join('\n')}${more}`;
  return { text: `${head}\n${body}`, blocks: [section(head), section(body)] };
}

/**
 * The ApplicationSet named, and the configured stage that selects it (whose `refresh` permission
 * applies); none when it is named as cluster/namespace/appset and no stage selects it.
 */
export async function resolveAppSet(ctx: CommandContext, raw: string, subcommand: string): Promise<{ cluster: string; namespace: string; name: string; where?: StageRef }> {
  const target = parseTarget(raw, subcommand);
  if (target.kind === 'object') {
    const where = stagesOfObject(ctx.config, target, 'ApplicationSet')[0];
    return { cluster: target.cluster, namespace: target.namespace, name: target.name, ...(where ? { where } : {}) };
  }
  const where = stageByName(ctx.config, target.pipeline, target.stage, subcommand);
  const { stage } = where;
  if (!stage.applicationSet) throw new UsageError(`${target.pipeline}@${target.stage} does not select an ApplicationSet; name one as cluster/namespace/appset`, subcommand);
  return { cluster: stage.cluster, namespace: stage.applicationSet.namespace, name: stage.applicationSet.name, where };
}

export const freshness: Subcommand = {
  name: NAME,
  usage: 'freshness <cluster/namespace/appset | pipeline@stage> [--refresh] [--timeout 5m]',
  summary: "Show which of an ApplicationSet's Applications Argo CD has reconciled since the latest step transition; --refresh asks for the stale ones and waits.",
  examples: ['/glidepath freshness prod/argocd/checkout', '/glidepath freshness prod/argocd/checkout --refresh --timeout 2m'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, ['timeout'], ['refresh']);
    if (words.positional.length !== 1) throw new UsageError('name exactly one ApplicationSet', NAME);
    const timeout = words.flags.get('timeout');
    if (timeout !== undefined && !words.flags.has('refresh')) throw new UsageError('--timeout only applies with --refresh', NAME);
    const timeoutMs = typeof timeout === 'string' ? parseDuration(timeout, NAME) : (ctx.followTimeoutMs ?? 5 * 60_000);
    const ref = await resolveAppSet(ctx, words.positional[0]!, NAME);
    const where = `${ref.cluster}/${ref.namespace}/${ref.name}`;
    const snapshot = await ctx.kube.checkFreshness(ref.cluster, ref.namespace, ref.name);
    if (!words.flags.has('refresh') || snapshot.report.stale.length === 0) {
      await ctx.slack.reply({ ...freshnessMessage(where, snapshot.report), inChannel: true });
      return;
    }
    // Permissions are per configured stage: an ApplicationSet no stage selects has nobody who may refresh it.
    if (!ref.where) throw new UsageError(`no configured stage selects ${where}, so nobody may refresh it through Glidepath; add it to a stage's applicationSet in the config, or refresh it in Argo CD`, NAME);
    const progress = (t: string): SlackText => ({ text: `:arrows_counterclockwise: *${where}*: refreshing ${snapshot.report.stale.length} stale Applications… ${t}` });
    let message: { channel: string; ts: string } | undefined;
    let lastUpdate = 0;
    let pending: Promise<void> = Promise.resolve();
    const release = await releaseAtStage(ctx, ref.where.pipeline.name, ref.where.stage.name);
    const { outcome, waited } = await refreshApplications(ctx, {
      where: ref.where,
      appSet: ref,
      snapshot,
      ...(release ? { releaseId: release.releaseId } : {}),
      timeoutMs,
      // The progress message only once the person may refresh: a refusal is theirs alone.
      onAllowed: async () => {
        message = await ctx.slack.post(progress(progressText(snapshot.report)));
      },
      onProgress: (p) => {
        const now = Date.now();
        if (now - lastUpdate < UPDATE_EVERY_MS || !message) return;
        lastUpdate = now;
        const at = message;
        pending = pending.then(() => ctx.slack.update(at, progress(p.text))).catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'freshness progress update failed'));
      },
    });
    await pending;
    if (!waited) {
      // Denied (nothing was patched) or failed mid-way: the person is told; the progress message, if any, says it stopped.
      const said = outcomeMessage(outcome);
      if (message) await ctx.slack.update(message, { text: `*${where}*: ${said.text}` });
      else await ctx.slack.reply(said);
      return;
    }
    const result = refreshOutcome(where, waited);
    const heading = result.fresh ? `:white_check_mark: *${where}*: ${result.headline}` : `:warning: *${where}*: ${result.headline}`;
    const final = freshnessMessage(where, waited.report, heading);
    await ctx.slack.update(message!, result.advice ? { text: `${final.text}\n${result.advice}`, blocks: [...(final.blocks ?? []), section(result.advice)] } : final);
  },
};
