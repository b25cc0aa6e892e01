/**
 * `promote <pipeline@stage | project/stage> [--freight name|alias] [--stage name|glob:…|regex:…] [--selector labels]`:
 * Kargo Promotions, each reported by the name Kargo gave it and followed to its end: in its Freight's
 * release thread by the watch on a watched cluster (the answer says so), else by the command here.
 * Stages are chosen in Kargo's own stageSelector grammar (kargo-choice.ts); an exact name is
 * promoted at once, anything else comes and goes, so the matched Stages are listed and confirmed
 * first, and chosen again at the click (what disappeared is named, not promoted).
 */
import { KubeActionError } from '../src/kube/errors.js';
import { freightLabel } from '../src/kube/kargo-availability.js';
import { availableFreight, TERMINAL_PROMOTION_PHASES } from '../src/kube/kargo.js';
import { getStage } from '../src/kube/reads.js';
import { upstreamKargoStage } from '../src/kube/promote-freight.js';
import { kargoPromote, type Created } from '../src/actions/intents.js';
import { heldFreightName } from '../src/model/kargo-stage-reading.js';
import { FINISHED_RELEASE_STATUSES } from '../src/releases/record/record.js';
import { encodePromoteConfirm, PROMOTE_CONFIRM_ACTION_ID, type PromoteButtonValue, type PromoteConfirmValue } from '../src/slack/buttons.js';
import { act, breakGlassOf, outcomeMessage, overriding, type BreakGlass } from './act.js';
import { actions, button, section } from './blocks.js';
import { splitWords, UsageError } from './parse.js';
import { releaseAtStage } from './releases.js';
import { followedIn, releaseOfFreight, watchedCluster } from './kargo-follow.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { stageByName, type StageRef } from './where.js';
import { choiceOfSelection, choiceSelection, exactStage, selectionOfConfirm, type StageChoice } from './kargo-choice.js';
import { describeSelection, type KargoStageSelection } from '../src/model/kargo-stage-selector.js';

const NAME = 'promote';
const KUBE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface PromoteScope {
  where: StageRef;
  cluster: string;
  project: string;
}

function resolve(ctx: CommandContext, raw: string): KargoScope {
  const at = /^([^@/\s]+)@([^@/\s]+)$/.exec(raw);
  if (at) {
    const scope = kargoScope(stageByName(ctx.config, at[1]!, at[2]!, NAME));
    if (!scope) throw new UsageError(`${raw} is not a Kargo stage in the config (it has no kargo: section)`, NAME);
    return scope;
  }
  // project/stage, the stage part in Kargo's stageSelector grammar (kargo-demo/prod, kargo-demo/glob:prod-*).
  const slash = /^([^@/\s]+)\/(\S+)$/.exec(raw);
  if (slash && KUBE_NAME.test(slash[1]!)) {
    const project = slash[1]!;
    for (const pipeline of ctx.config.pipelines) {
      const stage = pipeline.stages.find((s) => s.kargo?.project === project);
      if (stage) return { where: { pipeline, stage }, cluster: stage.cluster, project, selection: choiceSelection(project, { stage: slash[2]! }, NAME) };
    }
    throw new UsageError(`no configured stage uses the Kargo project "${project}"`, NAME);
  }
  throw new UsageError(`"${raw}" is not a stage: write pipeline@stage (shop@prod) or project/stage (kargo-demo/prod, kargo-demo/glob:prod-*)`, NAME);
}

/**
 * The Freight a promote sends: the one named, else the newest available to the Stage now (a read,
 * open to anyone, as status is). What the lookup could not do is left for the attempt to report,
 * inside act(), so that it is audited too.
 */
async function freightToPromote(ctx: CommandContext, scope: PromoteScope, stage: string, wanted: string | undefined): Promise<{ kind: 'chosen'; name: string; label: string } | { kind: 'problem'; error: unknown }> {
  if (wanted) return { kind: 'chosen', name: wanted, label: `Freight ${wanted}` };
  try {
    const available = await availableFreight(ctx.clusters.api(scope.cluster), scope.project, stage, ctx.now ? { now: ctx.now } : {});
    if (!available.newest) return { kind: 'problem', error: new KubeActionError('not-found', `no Freight is available to ${stage} yet (none is verified in all its upstream Stages); nothing was changed`) };
    return { kind: 'chosen', name: available.newest.metadata.name, label: `the newest available Freight, ${freightLabel(available.newest)},` };
  } catch (err) {
    return { kind: 'problem', error: err };
  }
}

/**
 * Promotes one Kargo Stage and says where it is followed (or follows it); returns the line for the summary.
 * The Freight is chosen first (the newest available unless named), so the attempt names it and its
 * release; everything that can refuse the promote (permission, no Freight available, the cluster)
 * is inside the engine's request, so every attempt is audited.
 */
async function promoteOne(ctx: CommandContext, scope: PromoteScope, stage: string, freightWanted: string | undefined, breakGlass?: BreakGlass): Promise<string> {
  let followed: Created | undefined;
  const chosen = await freightToPromote(ctx, scope, stage, freightWanted);
  // Watched: the promotion shows in its Freight's release thread (kargo-follow.ts), and the line goes there, never to another Freight's.
  const watched = watchedCluster(ctx, scope.cluster);
  const pipeline = scope.where.pipeline.name;
  const release = watched ? (chosen.kind === 'chosen' ? await releaseOfFreight(ctx, pipeline, chosen.name) : undefined) : await releaseAtStage(ctx, pipeline, scope.where.stage.name);
  const intent = kargoPromote(ctx, { cluster: scope.cluster, project: scope.project, stage, freight: chosen, onCreated: (created) => (followed = created) });
  const outcome = await act(ctx, { intent, where: scope.where, ...(release ? { releaseId: release.releaseId } : {}), ...overriding(breakGlass) });
  const answer = `\`${stage}\`: ${outcomeMessage(outcome).text}`;
  if (outcome.kind !== 'done' || !followed) return answer;
  if (watched) return `${answer}; ${await followedIn(ctx, pipeline, followed, release)}`;
  follow(ctx, scope, stage, followed);
  return answer;
}

/**
 * On a cluster heard only through webhooks (nothing else follows Kargo there): the phases of what
 * was created until it ends, in the release thread of the stage when there is one, else in a
 * thread under a message of its own. A PromotionRequest is followed in its Stage's
 * status (currentPromotionRequest, then lastPromotionRequest), where Kargo records it.
 */
function follow(ctx: CommandContext, scope: PromoteScope, stage: string, followed: Created): void {
  const { name, kind } = followed;
  void (async () => {
    const header = { text: `:arrow_forward: ${kind} \`${name}\` to \`${stage}\` (${scope.project}${kind === 'PromotionRequest' ? ", through Kargo's API" : ''}): following its phase` };
    const release = await releaseAtStage(ctx, scope.where.pipeline.name, scope.where.stage.name);
    const thread = release ? await ctx.threads.get(scope.where.pipeline.name, release.releaseId) : undefined;
    const parent = thread ? { channel: thread.channel, ts: thread.ts } : await ctx.slack.post(header);
    if (thread) await ctx.slack.post(header, { channel: thread.channel, threadTs: thread.ts });
    let chain = Promise.resolve();
    const onPhase = (phase: string, message: string | undefined): void => {
      const icon = phase === 'Succeeded' ? ':white_check_mark:' : TERMINAL_PROMOTION_PHASES.has(phase) ? ':x:' : ':hourglass_flowing_sand:';
      const said = message ? `: ${message.slice(0, 300)}` : '';
      // One lost line must not end the following.
      chain = chain
        .then(async () => void (await ctx.slack.post({ text: `${icon} \`${name}\` is ${phase}${said}` }, { channel: parent.channel, threadTs: parent.ts })))
        .catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message, promotion: name, phase }, `could not post a ${kind} phase`));
    };
    const timeoutMs = ctx.followTimeoutMs ?? 30 * 60_000;
    const result =
      kind === 'Promotion'
        ? await ctx.kube.followPromotion(scope.cluster, scope.project, name, { timeoutMs, onPhase: (phase, p) => onPhase(phase, p.status?.message ?? undefined) })
        : await ctx.kube.followPromotionRequest(scope.cluster, scope.project, stage, name, { timeoutMs, onPhase: (phase) => onPhase(phase, undefined) });
    await chain;
    const look = kind === 'Promotion' ? `kargo get promotion ${name} -p ${scope.project}` : `kargo get stage ${stage} -p ${scope.project}`;
    if (result.timedOut) await ctx.slack.post({ text: `:warning: stopped following \`${name}\` (still ${result.phase ?? 'without a phase'}); see \`${look}\`` }, { channel: parent.channel, threadTs: parent.ts });
  })().catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message, promotion: name }, `following a ${kind} failed`));
}

export async function promoteStages(ctx: CommandContext, scope: PromoteScope, stages: readonly string[], freight: string | undefined, breakGlass?: BreakGlass): Promise<SlackText> {
  const lines: string[] = [];
  for (const stage of stages) lines.push(await promoteOne(ctx, scope, stage, freight, breakGlass));
  return { text: lines.join('\n') };
}

/** At the click: the selection is made again; gone stages are named, new ones are not promoted unseen. */
export async function confirmPromote(ctx: CommandContext, value: PromoteConfirmValue): Promise<SlackText> {
  const where = stageByName(ctx.config, value.p, value.st, NAME);
  const scope: PromoteScope = { where, cluster: value.c, project: value.project };
  const selection = selectionOfConfirm(value);
  if ('invalid' in selection) return { text: `:x: This button's Stage choice is not valid: ${selection.invalid}. Nothing was changed.` };
  const present = new Set((await ctx.kube.selectStages(value.c, selection)).map((s) => s.metadata.name));
  const stillThere = value.stages.filter((s) => present.has(s));
  const gone = value.stages.filter((s) => !stillThere.includes(s));
  const unseen = [...present].filter((s) => !value.stages.includes(s)).sort();
  const result = await promoteStages(ctx, scope, stillThere, value.freight);
  const list = (names: string[]) => names.map((s) => `\`${s}\``).join(', ');
  const notes =
    (gone.length > 0 ? `\n:information_source: no longer matched, not promoted: ${list(gone)}` : '') +
    (unseen.length > 0 ? `\n:information_source: matched since you were asked, not promoted (run the command again to include them): ${list(unseen)}` : '');
  return { text: `${result.text}${notes}` };
}

/** What to promote, typed: the slash command parses its words into it, the Promote button builds it. */
export interface PromoteRequest {
  scope: KargoScope;
  freight?: string;
  /** Typed only, for one exactly named Stage (the confirm button carries no reason). */
  breakGlass?: BreakGlass;
}

/** Where to promote: the configured stage (for permissions and the thread) and the Kargo Stages meant. */
export type KargoScope = PromoteScope & { selection: KargoStageSelection };

/** The Kargo side of a configured stage; undefined when it has no kargo: section. */
export function kargoScope(where: StageRef): KargoScope | undefined {
  const kargo = where.stage.kargo;
  if (!kargo) return undefined;
  return { where, cluster: where.stage.cluster, project: kargo.project, selection: kargo.selection };
}

/**
 * Promotes one exactly named Kargo Stage at once, or asks to confirm the Stages a pattern or
 * selector matches (they come and go, so the person sees the list first). Answers through ctx.slack.
 */
export async function promoteTo(ctx: CommandContext, request: PromoteRequest): Promise<void> {
  const { scope, freight, breakGlass } = request;
  const { selection } = scope;
  const exact = exactStage(selection);
  if (exact) {
    await ctx.slack.reply({ ...(await promoteStages(ctx, scope, [exact], freight, breakGlass)), inChannel: true });
    return;
  }
  if (breakGlass) throw new UsageError('--break-glass overrides a freeze for one exactly named Stage: name it (project/stage), not a pattern or selector', NAME);
  const matched = (await ctx.kube.selectStages(scope.cluster, selection)).map((s) => s.metadata.name);
  if (matched.length === 0) {
    await ctx.slack.reply({ text: `:information_source: no Stage matches ${describeSelection(selection)}; nothing to promote` });
    return;
  }
  const value: PromoteConfirmValue = { v: 1, c: scope.cluster, project: scope.project, p: scope.where.pipeline.name, st: scope.where.stage.name, stages: matched, ...(freight ? { freight } : {}), ...choiceOfSelection(selection) };
  const encoded = encodePromoteConfirm(value);
  if (encoded === undefined) {
    await ctx.slack.reply({ text: `:information_source: ${matched.length} Stages match ${describeSelection(selection)}: too many to confirm with one button; narrow the choice (--stage, --selector), or promote them one by one with \`/glidepath promote ${scope.project}/&lt;stage&gt;\`. Nothing was promoted.` });
    return;
  }
  const head = `Promote ${freight ? `Freight ${freight}` : 'the newest available Freight'} to ${matched.length} Stage${matched.length === 1 ? '' : 's'} in ${scope.project}: ${matched.map((s) => `\`${s}\``).join(', ')}?`;
  await ctx.slack.reply({ text: head, blocks: [section(head), actions(button(PROMOTE_CONFIRM_ACTION_ID, `Promote ${matched.length}`, encoded, 'primary'))] });
}

/**
 * The Promote button of a healthy stage: promotes what proved healthy upstream to the next stage,
 * while the release is still in flight. Returns the line for the clicked message, or undefined
 * when it answered with a refusal instead.
 */
export async function promoteClicked(ctx: CommandContext, value: PromoteButtonValue): Promise<string | undefined> {
  const pipeline = ctx.config.pipelines.find((p) => p.name === value.p);
  const target = pipeline?.stages.find((s) => s.name === value.st);
  if (!pipeline || !target) {
    await ctx.slack.reply({ text: ':x: This button names no configured stage to promote to; nothing was changed. Use `/glidepath promote &lt;pipeline@stage&gt;`.' });
    return undefined;
  }
  const scope = kargoScope({ pipeline, stage: target });
  if (!scope) {
    await ctx.slack.reply({ text: `:information_source: ${value.p}@${value.st} is not a Kargo stage: it moves on with the release itself. When it pauses, approve it with \`/glidepath approve ${value.p}@${value.st}\`. Nothing was changed.` });
    return undefined;
  }
  const release = await ctx.releases.get(value.p, value.r);
  if (!release || FINISHED_RELEASE_STATUSES.includes(release.status)) {
    await ctx.slack.reply({ text: `:x: Release \`${value.r}\` is no longer in flight (${release?.status ?? 'gone'}) since the button was shown; nothing was changed.` });
    return undefined;
  }
  // What proved healthy upstream is what moves on, when the upstream stage is one Kargo Stage of the same project.
  const upstream = upstreamKargoStage(pipeline.stages.find((s) => s.name === value.from), target);
  const runsNow = upstream ? heldFreightName(await getStage(ctx.clusters.api(upstream.cluster), upstream.project, upstream.stage)) : undefined;
  const stale = value.fr !== undefined ? await staleFreight(ctx, value, value.fr, scope, runsNow, upstream !== undefined) : undefined;
  if (stale) {
    await ctx.slack.reply({ text: `:x: ${stale}; nothing was changed. To promote anyway: \`/glidepath promote ${value.p}@${value.st} --freight &lt;name&gt;\`.` });
    return undefined;
  }
  const freight = value.fr ?? runsNow;
  try {
    await promoteTo(ctx, { scope, ...(freight ? { freight } : {}) });
  } catch (err) {
    // As /glidepath promote answers it: the click was still a request, and the message says so.
    if (!(err instanceof KubeActionError)) ctx.logger.error({ err, subcommand: NAME }, 'command failed');
    await ctx.slack.reply({ text: err instanceof KubeActionError ? `:x: ${err.message}` : `:x: /glidepath ${NAME} failed unexpectedly; nothing more is known here, the Glidepath log has the details` });
  }
  return `<@${ctx.user.id}> asked to promote ${freight ? `Freight ${freight} ` : ''}to ${value.st}`;
}

/**
 * Why the Freight a Promote button was shown for is no longer the one to promote, or undefined
 * when it still is: the healthy upstream Stage runs other Freight now, or the Stage to promote
 * already runs it (someone promoted it since). Availability is Kargo's own check, at the promote.
 */
async function staleFreight(ctx: CommandContext, value: PromoteButtonValue, shown: string, scope: KargoScope, upstreamRuns: string | undefined, upstreamKnown: boolean): Promise<string | undefined> {
  if (upstreamKnown && upstreamRuns !== shown) return `Freight \`${shown}\` is no longer what ${value.p}@${value.from} runs (it runs ${upstreamRuns ? `\`${upstreamRuns}\`` : 'no Freight'} now), so it is not what proved healthy`;
  const exact = exactStage(scope.selection);
  if (exact) {
    const downstream = heldFreightName(await getStage(ctx.clusters.api(scope.cluster), scope.project, exact));
    if (downstream === shown) return `${value.p}@${value.st} already runs Freight \`${shown}\``;
  }
  return undefined;
}

export const promote: Subcommand = {
  name: NAME,
  usage: 'promote <pipeline@stage | project/stage> [--freight <name|alias>] [--stage <name | glob:pattern | regex:pattern>] [--selector <labels>] [--break-glass "why"]',
  summary: 'Promote Freight to Kargo Stages (default: the newest Freight available to each); Stages chosen by pattern or labels (Kargo\'s stageSelector grammar, ANDed) are confirmed first.',
  examples: ['/glidepath promote shop@prod --freight jolly-jaguar', '/glidepath promote kargo-demo/staging', '/glidepath promote shop@prod --stage glob:prod-* --selector tier=prod'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, ['freight', 'stage', 'selector', 'glob', 'break-glass'], []);
    if (words.positional.length !== 1) throw new UsageError('name exactly one stage', NAME);
    const stage = words.flags.get('stage') as string | undefined;
    const glob = words.flags.get('glob') as string | undefined;
    const selector = words.flags.get('selector') as string | undefined;
    if (stage !== undefined && glob !== undefined) throw new UsageError('use --stage glob:<pattern> or --glob <pattern>, not both', NAME);
    const freight = words.flags.get('freight') as string | undefined;
    const where = words.positional[0]!;
    let scope = resolve(ctx, where);
    const named = where.includes('/') ? { stage: where.slice(where.indexOf('/') + 1) } : {};
    if ('stage' in named && (stage !== undefined || glob !== undefined)) throw new UsageError(`${where} names the Stages already: drop --stage/--glob, or write the pattern after the project (kargo-demo/glob:prod-*)`, NAME);
    const choice: StageChoice = { ...named, ...(stage !== undefined ? { stage } : glob !== undefined ? { stage: `glob:${glob}` } : {}), ...(selector !== undefined ? { selector } : {}) };
    if (stage !== undefined || glob !== undefined || selector !== undefined) {
      // The person's choice replaces the configured one, in the same project (labels ANDed with a project/… name).
      scope = { ...scope, selection: choiceSelection(scope.project, choice, NAME) };
    }
    const breakGlass = breakGlassOf(words.flags);
    await promoteTo(ctx, { scope, ...(freight ? { freight } : {}), ...(breakGlass ? { breakGlass } : {}) });
  },
};
