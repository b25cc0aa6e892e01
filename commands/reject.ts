/**
 * `reject <target> <reason>` and the Reject button: hold a step with a reason. Nothing is sent to
 * the cluster (the pause stays, the RollingSync step is not synced, the promote is not made); the
 * rejection is a request to the action engine like any action (permission-gated as approving the
 * same step is, one audit entry with the reason, a line in the release thread), kept in Redis
 * for the state it holds (src/actions/rejections.ts). Approving that state later goes through and
 * says it overrides the rejection, by whom.
 */
import { kargoPromote, canaryStepApproval, rejection, rollingSyncStep } from '../src/actions/intents.js';
import type { Intent } from '../src/actions/types.js';
import { reasonProblem, REJECTION_REASON_LIMIT } from '../src/actions/rejections.js';
import {
  encodeRejectDialog,
  REJECT_DIALOG_CALLBACK_ID,
  REJECT_REASON_ACTION_ID,
  REJECT_REASON_BLOCK_ID,
  type ApproveClick,
  type RejectDialogMetadata,
} from '../src/slack/buttons.js';
import { code } from '../src/text/mrkdwn.js';
import { act, outcomeMessage, type ClickAnswer } from './act.js';
import { nextStep, typedRolloutStep, type RolloutRef } from './approve.js';
import { confirmModal, section } from './blocks.js';
import { parseTarget, UsageError } from './parse.js';
import { releaseAtStage, releaseWithTarget } from './releases.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { stageByName, stageOfRollout, stagesOfObject, type StageRef } from './where.js';

const NAME = 'reject';

/** Runs the rejection of what `held` would do through the engine. */
async function rejectThrough(ctx: CommandContext, held: Intent, where: StageRef, reason: string, releaseId: string | undefined): Promise<ClickAnswer> {
  const outcome = await act(ctx, { intent: rejection(ctx, held, where, reason, releaseId), where, reason, ...(releaseId ? { releaseId } : {}) });
  return { outcome, message: outcomeMessage(outcome) };
}

async function rejectRollout(ctx: CommandContext, where: StageRef, ref: RolloutRef, reason: string, read?: Parameters<typeof typedRolloutStep>[3]): Promise<SlackText> {
  const step = await typedRolloutStep(ctx, where, ref, read);
  if (typeof step === 'string') return { text: `:x: ${step}; there is no step to reject` };
  return (await rejectThrough(ctx, canaryStepApproval(ctx, ref, step.expected), where, reason, step.releaseId)).message;
}

async function rejectAppSetStep(ctx: CommandContext, where: StageRef, ref: RolloutRef, reason: string): Promise<SlackText> {
  const next = await nextStep(ctx, ref, where.stage.applicationSet?.step);
  if (typeof next === 'string') return { text: `:information_source: ${next}` };
  const release = await releaseAtStage(ctx, where.pipeline.name, where.stage.name);
  return (await rejectThrough(ctx, rollingSyncStep(ctx, ref, next.step, next.revision), where, reason, release?.releaseId)).message;
}

/** A Kargo stage configured with one exact Stage name: promotions to it are held (a pattern or selector names no one Stage to hold). */
async function rejectPromotion(ctx: CommandContext, where: StageRef, reason: string): Promise<SlackText> {
  const kargo = where.stage.kargo!;
  const stage = kargo.stage;
  if (stage === undefined || /^(glob|regex):/.test(stage) || kargo.selector !== undefined) {
    throw new UsageError(`${where.pipeline.name}@${where.stage.name} selects its Kargo Stages by pattern or labels: only a stage configured with one Stage name can be rejected`, NAME);
  }
  // Never sent: the promote is only named, so the rejection holds promotions to this Stage.
  const held = kargoPromote(ctx, { cluster: where.stage.cluster, project: kargo.project, stage, freight: { kind: 'problem', error: new Error('a rejection promotes nothing') } });
  const release = await releaseAtStage(ctx, where.pipeline.name, where.stage.name);
  return (await rejectThrough(ctx, { ...held, describe: `promote to ${held.target}` }, where, reason, release?.releaseId)).message;
}

/** `<target> <reason…>`: the reason is the rest of the line as typed (quotes around it are dropped). */
function targetAndReason(text: string): { target: string; reason: string } {
  const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(text);
  if (!m) throw new UsageError('name a target and say why: `/glidepath reject checkout@prod the error rate doubled`', NAME);
  const reason = m[2]!.trim().replace(/^"([\s\S]*)"$/, '$1').trim();
  const problem = reasonProblem(reason);
  if (problem) throw new UsageError(problem, NAME);
  return { target: m[1]!, reason };
}

/** The Reject button of a paused reply: a dialog asks for the reason (nothing is held before it is given). */
export async function rejectClicked(ctx: CommandContext, value: ApproveClick): Promise<void> {
  const meta: RejectDialogMetadata = { c: value.c, ns: value.ns, n: value.n, g: value.g, h: value.h, s: value.s, channel: ctx.channel };
  await ctx.slack.openDialog(
    confirmModal({
      callbackId: REJECT_DIALOG_CALLBACK_ID,
      metadata: encodeRejectDialog(meta),
      title: 'Reject this step?',
      submit: 'Reject',
      blocks: [
      section(`Hold step ${value.s + 1} of ${code(`${value.c}/${value.ns}/${value.n}`)} with a reason. Nothing is changed in the cluster: the pause stays. An approval of this step later overrides the rejection, and says so.`),
      {
        type: 'input',
        block_id: REJECT_REASON_BLOCK_ID,
        label: { type: 'plain_text', text: 'Why?' },
        element: { type: 'plain_text_input', action_id: REJECT_REASON_ACTION_ID, multiline: true, min_length: 1, max_length: REJECTION_REASON_LIMIT },
      },
      ],
    }),
  );
}

/** The reject dialog's submit: the step the button was shown for, held with the reason given. */
export async function rejectConfirmed(ctx: CommandContext, meta: RejectDialogMetadata, reason: string): Promise<ClickAnswer> {
  const problem = reasonProblem(reason);
  if (problem) return { message: { text: `:x: ${problem}; nothing was held` } };
  const target = `${meta.c}/${meta.ns}/${meta.n}`;
  const { where } = await stageOfRollout(ctx, { kind: 'object', cluster: meta.c, namespace: meta.ns, name: meta.n });
  if (!where) return { message: { text: `:x: No configured stage selects ${target} any more; nothing was held.` } };
  // The release is the one the record shows the Rollout in (never one a button claims).
  const releaseId = (await releaseWithTarget(ctx, where.pipeline.name, target))?.record.releaseId;
  const held = canaryStepApproval(ctx, { cluster: meta.c, namespace: meta.ns, name: meta.n }, { generation: meta.g, podHash: meta.h, stepIndex: meta.s });
  return rejectThrough(ctx, held, where, reason.trim(), releaseId);
}

export const reject: Subcommand = {
  name: NAME,
  usage: 'reject <pipeline@stage | cluster/namespace/rollout | cluster/namespace/appset> <reason>',
  summary: `Hold a canary step, a RollingSync step or promotions to a Kargo stage, with a reason (at most ${REJECTION_REASON_LIMIT} characters): nothing is changed; approving it later overrides the rejection and says so.`,
  examples: ['/glidepath reject prod/shop/checkout p99 latency doubled at 20%', '/glidepath reject checkout@prod-eu "wait for the DB migration"'],
  async run(ctx, text) {
    const { target: typed, reason } = targetAndReason(text);
    const target = parseTarget(typed, NAME);
    let message: SlackText;
    if (target.kind === 'stage') {
      const where = stageByName(ctx.config, target.pipeline, target.stage, NAME);
      const s = where.stage;
      if (s.applicationSet) message = await rejectAppSetStep(ctx, where, { cluster: s.cluster, namespace: s.applicationSet.namespace, name: s.applicationSet.name }, reason);
      else if (s.kargo) message = await rejectPromotion(ctx, where, reason);
      else {
        const release = await releaseAtStage(ctx, where.pipeline.name, s.name);
        const paused = Object.values(release?.stages.find((x) => x.name === s.name)?.targets ?? {}).filter((t) => t.ref.kind === 'Rollout' && t.phase === 'Paused');
        if (paused.length === 0) throw new UsageError(`nothing in ${target.pipeline}@${target.stage} is paused waiting for approval; name a Rollout as cluster/namespace/rollout`, NAME);
        const lines: string[] = [];
        for (const t of paused) lines.push((await rejectRollout(ctx, where, t.ref, reason)).text);
        message = { text: lines.join('\n') };
      }
    } else {
      const appSetStages = stagesOfObject(ctx.config, target, 'ApplicationSet');
      const rollout = appSetStages[0] ? {} : await stageOfRollout(ctx, target);
      if (appSetStages[0]) message = await rejectAppSetStep(ctx, appSetStages[0], target, reason);
      else if (rollout.where) message = await rejectRollout(ctx, rollout.where, target, reason, rollout.live);
      else throw new UsageError(`no configured stage selects ${target.cluster}/${target.namespace}/${target.name} (as a Rollout namespace or an ApplicationSet)`, NAME);
    }
    await ctx.slack.reply({ ...message, inChannel: true });
  },
};
