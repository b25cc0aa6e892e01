/**
 * `freshness <cluster/namespace/appset> [--refresh] [--timeout 5m]`: each child of an
 * ApplicationSet, fresh or stale and why, counts first. With --refresh, the stale ones are asked
 * to refresh, again in bounded rounds while they stay stale (docs/freshness.md), and one message
 * counts them up ("31/40 fresh") until all are fresh, the rounds are spent, or the timeout.
 */
import type { FreshnessReport } from '../src/kube/freshness.js';
import { progressText } from '../src/kube/freshness.js';
import type { WaitFreshResult } from '../src/kube/freshness-reader.js';
import { roundsText } from '../src/kube/refresh-rounds.js';
import { freshnessRefreshRounds } from '../src/config/file.js';
import { parseDuration, parseTarget, splitWords, UsageError } from './parse.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { section } from './blocks.js';
import { stageByName } from './where.js';

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

/** How a refresh ended, for a person: fresh after N rounds, or still stale, why it stopped, and what to do. */
export function refreshOutcome(where: string, result: Pick<WaitFreshResult, 'report' | 'timedOut' | 'gaveUp' | 'rounds'>): { fresh: boolean; headline: string; advice?: string } {
  const rounds = roundsText(result.rounds);
  if (result.report.stale.length === 0) return { fresh: true, headline: `${progressText(result.report)} after ${rounds}` };
  const stopped = result.timedOut ? `at the timeout, after ${rounds}` : `after ${rounds}`;
  const advice = result.gaveUp
    ? `Argo CD took every refresh but has not reconciled them since the latest step transition (argo-cd#29347); its periodic resync (every 2-3 min) will. Run \`/glidepath freshness ${where} --refresh\` again then, or check the Argo CD application controller if they stay stale.`
    : `Argo CD has not got to every refresh yet; run \`/glidepath freshness ${where} --refresh\` again in a few minutes, or with a longer \`--timeout\`.`;
  return { fresh: false, headline: `${progressText(result.report)} ${stopped}; still stale: ${result.report.stale.length}`, advice };
}

export async function resolveAppSet(ctx: CommandContext, raw: string, subcommand: string): Promise<{ cluster: string; namespace: string; name: string }> {
  const target = parseTarget(raw, subcommand);
  if (target.kind === 'object') return target;
  const { stage } = stageByName(ctx.config, target.pipeline, target.stage, subcommand);
  if (!stage.applicationSet) throw new UsageError(`${target.pipeline}@${target.stage} does not select an ApplicationSet; name one as cluster/namespace/appset`, subcommand);
  return { cluster: stage.cluster, namespace: stage.applicationSet.namespace, name: stage.applicationSet.name };
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
    const progress = (t: string): SlackText => ({ text: `:arrows_counterclockwise: *${where}*: refreshing ${snapshot.report.stale.length} stale Applications… ${t}` });
    const message = await ctx.slack.post(progress(progressText(snapshot.report)));
    let lastUpdate = 0;
    let pending: Promise<void> = Promise.resolve();
    const result = await ctx.kube.refreshAndWait(ref.cluster, ref.namespace, snapshot, {
      timeoutMs,
      rounds: freshnessRefreshRounds(ctx.config),
      onProgress: (p) => {
        const now = Date.now();
        if (now - lastUpdate < UPDATE_EVERY_MS) return;
        lastUpdate = now;
        pending = pending.then(() => ctx.slack.update(message, progress(p.text))).catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'freshness progress update failed'));
      },
    });
    await pending;
    const outcome = refreshOutcome(where, result);
    await ctx.audit.append({ actor: { slackUserId: ctx.user.id }, action: 'refresh', target: where, result: 'done', reason: `refreshed ${result.refreshed.requested.length} Applications; ${outcome.headline}` });
    const heading = outcome.fresh ? `:white_check_mark: *${where}*: ${outcome.headline}` : `:warning: *${where}*: ${outcome.headline}`;
    const final = freshnessMessage(where, result.report, heading);
    await ctx.slack.update(message, outcome.advice ? { text: `${final.text}\n${outcome.advice}`, blocks: [...(final.blocks ?? []), section(outcome.advice)] } : final);
  },
};
