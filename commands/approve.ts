/**
 * `approve <target>`: a Rollout paused at a canary step (the same patches as `kubectl argo
 * rollouts promote`), or the next RollingSync step of an ApplicationSet, only on fresh state.
 */
import { deriveRolloutState } from '../src/model/rollout-state.js';
import { progressText, type ChildFreshness } from '../src/kube/freshness.js';
import { refreshApplications, refreshOutcome } from './refresh.js';
import { getRollout } from '../src/kube/reads.js';
import type { Rollout } from '../src/model/rollout.js';
import { stepsOfChildren, type RollingSyncRefusal } from '../src/kube/rolling-sync.js';
import type { ExpectedCanaryStep, RolloutRefusal } from '../src/kube/rollout-operations.js';
import { act, breakGlassOf, outcomeMessage, overriding, type BreakGlass, type ClickAnswer, type Outcome } from './act.js';
import { permissionGate } from '../src/actions/gates.js';
import { canaryStepApproval, rollingSyncStep } from '../src/actions/intents.js';
import { encodeRefreshApprove, NOT_AN_APPSET_BUTTON, REFRESH_APPROVE_ACTION_ID, type ApproveClick, type RefreshApproveValue } from '../src/slack/buttons.js';
import { actions, button, section } from './blocks.js';
import { parseTarget, splitWords, UsageError } from './parse.js';
import { releaseAtStage, releaseWithTarget } from './releases.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { stageByName, stageOfRollout, stagesOfObject, type StageRef } from './where.js';

const NAME = 'approve';

export interface RolloutRef {
  cluster: string;
  namespace: string;
  name: string;
}

/**
 * Approves one Rollout at the step the person saw; `where` is the stage that grants the right.
 * `releaseId` (whose thread gets the line, and which the audit names) is the release the record
 * shows the Rollout in, looked up by the caller: never a release id a button claims, as a button
 * value can be edited.
 */
export async function approveRollout(ctx: CommandContext, where: StageRef, ref: RolloutRef, expected: ExpectedCanaryStep, releaseId: string | undefined, breakGlass?: BreakGlass): Promise<Outcome<RolloutRefusal>> {
  return act(ctx, { intent: canaryStepApproval(ctx, ref, expected), where, ...(releaseId ? { releaseId } : {}), ...overriding(breakGlass) });
}

export interface AppSetRef {
  cluster: string;
  namespace: string;
  name: string;
}

/**
 * The step to approve: the stage's configured step, else the first step still Waiting in the
 * ApplicationSet's status. The revision is the newest one the controller is rolling out (the
 * targetRevisions of its latest transition); syncRollingSyncStep checks everything else on fresh state.
 */
export async function nextStep(ctx: CommandContext, ref: AppSetRef, configured: number | undefined): Promise<{ step: number; revision: string } | string> {
  const snapshot = await ctx.kube.checkFreshness(ref.cluster, ref.namespace, ref.name);
  const { appSet, children } = snapshot;
  if (appSet.spec?.strategy?.type !== 'RollingSync') return `ApplicationSet ${ref.name} does not use RollingSync: there is no step to approve`;
  const entries = appSet.status?.applicationStatus ?? [];
  const newest = [...entries].filter((e) => (e.targetRevisions ?? []).length > 0).sort((a, b) => Date.parse(b.lastTransitionTime ?? '') - Date.parse(a.lastTransitionTime ?? ''))[0];
  const revision = newest?.targetRevisions?.[0];
  if (!revision) return `${ref.name} has no target revision in the ApplicationSet's status yet: wait for the controller, or refresh with \`/glidepath freshness ${ref.cluster}/${ref.namespace}/${ref.name} --refresh\``;
  if (configured !== undefined) return { step: configured, revision };
  const steps = stepsOfChildren(appSet, children);
  const waiting = entries.filter((e) => e.status === 'Waiting').map((e) => steps.get(e.application) ?? -1).filter((n) => n >= 1);
  if (waiting.length === 0) return `no RollingSync step of ${ref.name} is waiting: nothing to approve`;
  return { step: Math.min(...waiting), revision };
}

export function staleRefusal(ref: AppSetRef, step: number, revision: string, stale: readonly ChildFreshness[], reason: string): SlackText {
  const value: RefreshApproveValue = { v: 1, c: ref.cluster, ns: ref.namespace, n: ref.name, step, rev: revision };
  const list = stale.slice(0, 20).map((s) => `• \`${s.name}\`: ${s.reason ?? 'stale'}`).join('\n');
  const more = stale.length > 20 ? `\n…and ${stale.length - 20} more` : '';
  const text = `:warning: ${reason}`;
  const encoded = encodeRefreshApprove(value);
  // A revision too long for a button leaves the person the words: refresh, then approve again.
  const button_ = encoded === undefined ? [] : [actions(button(REFRESH_APPROVE_ACTION_ID, 'Refresh and approve', encoded, 'primary'))];
  return { text, blocks: [section(text), section(`*Stale (${stale.length}):*\n${list}${more}`), ...button_] };
}

/** Syncs a RollingSync step; refuses on stale children with their list and a Refresh-and-approve button. */
export async function approveAppSetStep(ctx: CommandContext, where: StageRef, ref: AppSetRef, step: number, revision: string, releaseId: string | undefined, breakGlass?: BreakGlass): Promise<{ outcome: Outcome<RollingSyncRefusal>; message: SlackText }> {
  const outcome = await act(ctx, { intent: rollingSyncStep(ctx, ref, step, revision), where, ...(releaseId ? { releaseId } : {}), ...overriding(breakGlass) });
  if (outcome.kind === 'refused' && outcome.details.why === 'stale') {
    return { outcome, message: staleRefusal(ref, step, revision, outcome.details.stale, outcome.reason) };
  }
  return { outcome, message: outcomeMessage(outcome) };
}

/**
 * The step a typed approve (or reject) of a Rollout acts on: what the release thread showed, else
 * what the cluster says now; a string when it is not paused at a canary step.
 */
export async function typedRolloutStep(ctx: CommandContext, where: StageRef, ref: RolloutRef, read?: Rollout): Promise<{ expected: ExpectedCanaryStep; releaseId?: string } | string> {
  const key = `${ref.cluster}/${ref.namespace}/${ref.name}`;
  const known = await releaseWithTarget(ctx, where.pipeline.name, key);
  const releaseId = known ? { releaseId: known.record.releaseId } : {};
  if (known?.target.podHash && known.target.step && known.target.generation !== undefined) {
    // What the person saw in the thread is what they approve. There was no button: a refusal
    // says what the thread showed, not "since the button was shown".
    return { expected: { generation: known.target.generation, podHash: known.target.podHash, stepIndex: known.target.step.index, seen: `the release thread showed step ${known.target.step.index + 1}` }, ...releaseId };
  }
  const live = read ?? (await getRollout(ctx.clusters.api(ref.cluster), ref.namespace, ref.name));
  const state = deriveRolloutState(live);
  if (!state.pause || !state.podHash || state.step === undefined) return `${key} is not paused at a canary step (it is ${state.phase})`;
  return { expected: { generation: live.metadata.generation ?? 0, podHash: state.podHash, stepIndex: state.step.index, seen: 'it was read a moment ago' }, ...releaseId };
}

async function approveTypedRollout(ctx: CommandContext, where: StageRef, ref: RolloutRef, read?: Rollout, breakGlass?: BreakGlass): Promise<SlackText> {
  const step = await typedRolloutStep(ctx, where, ref, read);
  if (typeof step === 'string') return { text: `:x: ${step}; nothing to approve` };
  return outcomeMessage(await approveRollout(ctx, where, ref, step.expected, step.releaseId, breakGlass));
}

async function approveTypedAppSet(ctx: CommandContext, where: StageRef, ref: AppSetRef, breakGlass?: BreakGlass): Promise<SlackText> {
  const next = await nextStep(ctx, ref, where.stage.applicationSet?.step);
  if (typeof next === 'string') return { text: `:information_source: ${next}` };
  const release = await releaseAtStage(ctx, where.pipeline.name, where.stage.name);
  return (await approveAppSetStep(ctx, where, ref, next.step, next.revision, release?.releaseId, breakGlass)).message;
}

/** The Approve button of a paused reply: the step it was shown for, in the stage the Rollout's live labels put it in. */
export async function approveClicked(ctx: CommandContext, value: ApproveClick): Promise<ClickAnswer> {
  const ref = { kind: 'object' as const, cluster: value.c, namespace: value.ns, name: value.n };
  // The stage is judged from the Rollout's live labels, not only from what the button says.
  const { where } = await stageOfRollout(ctx, ref);
  if (!where) return { message: { text: `:x: No configured stage selects ${value.c}/${value.ns}/${value.n} any more; nothing was changed.` } };
  // The release is the one the record shows the Rollout in, not value.r (a button value can be edited).
  const releaseId = (await releaseWithTarget(ctx, where.pipeline.name, `${ref.cluster}/${ref.namespace}/${ref.name}`))?.record.releaseId;
  const outcome = await approveRollout(ctx, where, ref, { generation: value.g, podHash: value.h, stepIndex: value.s }, releaseId);
  return { outcome, message: outcomeMessage(outcome) };
}

/**
 * Refresh-and-approve on a freshness refusal: refreshes the stale Applications, waits for them,
 * then approves the step it was shown for (refused again, with the list, if they are still stale).
 */
export async function refreshAndApprove(ctx: CommandContext, value: RefreshApproveValue): Promise<ClickAnswer> {
  const where = stagesOfObject(ctx.config, { kind: 'object', cluster: value.c, namespace: value.ns, name: value.n }, 'ApplicationSet')[0];
  if (!where) return { message: { text: NOT_AN_APPSET_BUTTON } };
  const ref: AppSetRef = { cluster: value.c, namespace: value.ns, name: value.n };
  // The release at the stage, as for a typed approve: its thread gets the line of the approval, done or refused.
  const release = await releaseAtStage(ctx, where.pipeline.name, where.stage.name);
  // No refresh on behalf of someone who may not approve: the attempt is refused (and audited) at once.
  const gate = await permissionGate(ctx, { action: 'approve', where, writes: rollingSyncStep(ctx, ref, value.step, value.rev).writes });
  if (!gate.decision.allowed) return { message: (await approveAppSetStep(ctx, where, ref, value.step, value.rev, release?.releaseId)).message };
  const snapshot = await ctx.kube.checkFreshness(ref.cluster, ref.namespace, ref.name);
  if (snapshot.report.stale.length > 0) {
    // The refresh is a write of its own (the refresh permission, its own audit entry), through act() like the approval.
    const refreshed = await refreshApplications(ctx, {
      where,
      appSet: ref,
      snapshot,
      ...(release ? { releaseId: release.releaseId } : {}),
      timeoutMs: ctx.followTimeoutMs ?? 5 * 60_000,
      ...(ctx.now ? { now: ctx.now } : {}),
      onAllowed: () => ctx.slack.reply({ text: `:arrows_counterclockwise: Refreshing ${snapshot.report.stale.length} stale Applications of ${ref.name} (${progressText(snapshot.report)}), then approving step ${value.step}…` }),
    });
    const waited = refreshed.waited;
    if (!waited) return { message: { text: `${outcomeMessage(refreshed.outcome).text}; nothing was approved.` } };
    const outcome = refreshOutcome(`${ref.cluster}/${ref.namespace}/${ref.name}`, waited);
    if (!outcome.fresh) {
      const stale = waited.report.stale.slice(0, 20).map((s) => `${s.name} (${s.reason ?? 'stale'})`).join(', ');
      const more = waited.report.stale.length > 20 ? ` and ${waited.report.stale.length - 20} more` : '';
      return { message: { text: `:warning: Not fresh: ${outcome.headline}: ${stale}${more}; nothing was approved. ${outcome.advice ?? ''}`.trimEnd() } };
    }
    const approved = await approveAppSetStep(ctx, where, ref, value.step, value.rev, release?.releaseId);
    const lead = `Fresh: ${outcome.headline}.`;
    return { ...approved, message: { ...approved.message, text: `${lead}\n${approved.message.text}`, ...(approved.message.blocks ? { blocks: [section(lead), ...approved.message.blocks] } : {}) } };
  }
  return approveAppSetStep(ctx, where, ref, value.step, value.rev, release?.releaseId);
}

export const approve: Subcommand = {
  name: NAME,
  usage: 'approve <pipeline@stage | cluster/namespace/rollout | cluster/namespace/appset> [--break-glass "why"]',
  summary: 'Approve a Rollout paused at a canary step, or the next RollingSync step of an ApplicationSet (only when its Applications are fresh).',
  examples: ['/glidepath approve prod/shop/checkout', '/glidepath approve checkout@prod-eu'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, ['break-glass'], []);
    const breakGlass = breakGlassOf(words.flags);
    if (words.positional.length !== 1) throw new UsageError('name exactly one target', NAME);
    const target = parseTarget(words.positional[0]!, NAME);
    let message: SlackText;
    if (target.kind === 'stage') {
      const where = stageByName(ctx.config, target.pipeline, target.stage, NAME);
      const s = where.stage;
      if (s.applicationSet) {
        message = await approveTypedAppSet(ctx, where, { cluster: s.cluster, namespace: s.applicationSet.namespace, name: s.applicationSet.name }, breakGlass);
      } else if (s.rollouts) {
        const release = await releaseAtStage(ctx, where.pipeline.name, s.name);
        const paused = Object.values(release?.stages.find((x) => x.name === s.name)?.targets ?? {}).filter((t) => t.ref.kind === 'Rollout' && t.phase === 'Paused');
        if (paused.length === 0) throw new UsageError(`nothing in ${target.pipeline}@${target.stage} is paused waiting for approval; name a Rollout as cluster/namespace/rollout`, NAME);
        const lines: string[] = [];
        for (const t of paused) lines.push((await approveTypedRollout(ctx, where, t.ref, undefined, breakGlass)).text);
        message = { text: lines.join('\n') };
      } else {
        throw new UsageError(`${target.pipeline}@${target.stage} is a Kargo stage: use /glidepath promote`, NAME);
      }
    } else {
      const appSetStages = stagesOfObject(ctx.config, target, 'ApplicationSet');
      const rollout = appSetStages[0] ? {} : await stageOfRollout(ctx, target);
      if (appSetStages[0]) message = await approveTypedAppSet(ctx, appSetStages[0], target, breakGlass);
      else if (rollout.where) message = await approveTypedRollout(ctx, rollout.where, target, rollout.live, breakGlass);
      else throw new UsageError(`no configured stage selects ${target.cluster}/${target.namespace}/${target.name} (as a Rollout namespace or an ApplicationSet)`, NAME);
    }
    await ctx.slack.reply({ ...message, inChannel: true });
  },
};
