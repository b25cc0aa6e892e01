/**
 * Every cluster-changing attempt goes through here: permission, the optional second approver,
 * the action, and the record of it. The Kubernetes actor is Glidepath's service account, so the
 * audit entry (and its line in the release thread, and the log) is the only record of the person.
 */
import { KubeActionError } from '../src/kube/errors.js';
import { authorize, type ClusterAction } from '../src/policy/permissions.js';
import type { AuditResult } from '../src/audit/audit-log.js';
import type { CommandContext, SlackText } from './types.js';
import { label, type StageRef } from './where.js';

/** What an attempt's action did: it ran, or the cluster's state made Glidepath refuse (nothing was changed). */
export type AttemptResult<D> =
  | { kind: 'done'; summary: string; before?: unknown; after?: unknown }
  | { kind: 'refused'; reason: string; details: D; before?: unknown };

export interface Attempt<D = undefined> {
  action: ClusterAction;
  /** `prod/shop/checkout`, `checkout@prod`. */
  target: string;
  where: StageRef;
  releaseId?: string;
  /** Object + generation + step: what two approvers must agree on (approve only). */
  approvalKey?: string;
  /** What the person asked for, in words: "approve step 2 of prod/shop/checkout". */
  describe: string;
  run(): Promise<AttemptResult<D>>;
}

/**
 * A click's answer: the outcome when an action was attempted (the listener marks the clicked
 * message when it went through), and the message to show either way.
 */
export interface ClickAnswer {
  outcome?: Outcome<unknown>;
  message: SlackText;
}

export type Outcome<D = unknown> =
  | { kind: 'done'; summary: string }
  /** Not allowed (permissions, or the same person approving twice). */
  | { kind: 'denied'; reason: string }
  /** Allowed, but the object is not in the state the action needs; `details` say what instead. */
  | { kind: 'refused'; reason: string; details: D }
  /** Something went wrong (the cluster, the network): the unexpected. */
  | { kind: 'failed'; reason: string; error: unknown }
  | { kind: 'first-approval'; summary: string };

function person(ctx: CommandContext): string {
  return `<@${ctx.user.id}>`;
}

/**
 * A line in the release thread, when the release and its thread are known; never fails the action.
 * `markedByClick`: the action succeeded from a button in that same thread, whose message is edited
 * to say so; a second line saying the same would make one approval read as two.
 */
export async function threadLine(ctx: CommandContext, pipeline: string, releaseId: string | undefined, text: string, markedByClick = false): Promise<void> {
  if (!releaseId) return;
  try {
    const thread = await ctx.threads.get(pipeline, releaseId);
    if (markedByClick && thread && ctx.clicked?.channel === thread.channel && ctx.clicked.threadTs === thread.ts) return;
    if (thread) await ctx.slack.post({ text }, { channel: thread.channel, threadTs: thread.ts });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message, pipeline, releaseId }, 'could not post the action line in the release thread');
  }
}

async function record<D>(ctx: CommandContext, attempt: Attempt<D>, result: AuditResult, reason: string, extra: { before?: unknown; after?: unknown } = {}): Promise<void> {
  const entry = {
    actor: { slackUserId: ctx.user.id, ...(ctx.user.name ? { name: ctx.user.name } : {}) },
    action: attempt.action,
    target: attempt.target,
    result,
    reason,
    pipeline: attempt.where.pipeline.name,
    stage: attempt.where.stage.name,
    ...(attempt.releaseId ? { releaseId: attempt.releaseId } : {}),
    ...extra,
  };
  await ctx.audit.append(entry);
  ctx.logger.info({ audit: { ...entry, before: undefined, after: undefined } }, `action ${attempt.action} ${result}`);
}

/** An outcome in words, for the person who asked. */
export function outcomeMessage(outcome: Outcome<unknown>): SlackText {
  switch (outcome.kind) {
    case 'done':
      return { text: `:white_check_mark: ${outcome.summary}` };
    case 'first-approval':
      return { text: `:hourglass_flowing_sand: ${outcome.summary}` };
    case 'denied':
      return { text: `:no_entry: Not allowed: ${outcome.reason}` };
    case 'refused':
    case 'failed':
      return { text: `:x: ${outcome.reason}` };
  }
}

const ICON: Record<AuditResult, string> = { allowed: ':hourglass_flowing_sand:', denied: ':no_entry:', failed: ':x:', done: ':white_check_mark:' };

export async function act<D>(ctx: CommandContext, attempt: Attempt<D>): Promise<Outcome<D>> {
  const where = label(attempt.where);
  // Done and first approvals mark the clicked message (src/slack/listeners/actions/buttons.ts).
  const line = (result: AuditResult, text: string) => threadLine(ctx, attempt.where.pipeline.name, attempt.releaseId, `${ICON[result]} ${text}`, result === 'done' || result === 'allowed');
  const decision = await authorize(ctx.config, { pipeline: attempt.where.pipeline.name, stage: attempt.where.stage.name }, attempt.action, ctx.user.id, ctx.groups);
  if (!decision.allowed) {
    await record(ctx, attempt, 'denied', decision.reason);
    await line('denied', `${person(ctx)} tried to ${attempt.describe} (${where}): refused, ${decision.reason}`);
    return { kind: 'denied', reason: decision.reason };
  }
  let firstApprover: string | undefined;
  if (decision.requireTwoApprovers && attempt.approvalKey) {
    const second = await ctx.approvals.approve(attempt.approvalKey, ctx.user.id);
    if (second.kind === 'same-person') {
      const reason = `you already approved this; ${where} needs a second, different person to approve`;
      await record(ctx, attempt, 'denied', reason);
      return { kind: 'denied', reason };
    }
    if (second.kind === 'first') {
      const summary = `${person(ctx)} approved: 1 of 2 approvals to ${attempt.describe}; ${where} needs a second, different person to approve`;
      await record(ctx, attempt, 'allowed', 'first of two approvals recorded; nothing was changed yet');
      await line('allowed', summary);
      return { kind: 'first-approval', summary };
    }
    firstApprover = second.firstApprover;
  }
  await record(ctx, attempt, 'allowed', `allowed via ${decision.via}${firstApprover ? `, second approver after ${firstApprover}` : ''}`);
  const also = firstApprover ? ` (second approver, after <@${firstApprover}>)` : '';
  let result: AttemptResult<D>;
  try {
    result = await attempt.run();
  } catch (err) {
    const reason = err instanceof KubeActionError ? err.message : `unexpected error: ${(err as Error).message}`;
    await notDone(ctx, attempt, firstApprover, reason, undefined);
    if (!(err instanceof KubeActionError)) ctx.logger.error({ err }, 'action failed unexpectedly');
    return { kind: 'failed', reason, error: err };
  }
  if (result.kind === 'refused') {
    // A stale button (the object moved on since it was shown): nothing changed and nothing is the
    // team's business, so the answer is for the person alone (ephemeral) and the audit. A gate
    // that held the action (stale Argo CD state, earlier steps unfinished, Kargo said no) is part
    // of the release's story, and its thread is told who tried and why not.
    await notDone(ctx, attempt, firstApprover, result.reason, result.before, !staleButton(result.details));
    return { kind: 'refused', reason: result.reason, details: result.details };
  }
  await record(ctx, attempt, 'done', result.summary, { before: result.before, after: result.after });
  await line('done', `${person(ctx)}${also}: ${result.summary}`);
  return { kind: 'done', summary: `${result.summary}${also}` };
}

/** The refusals that mean only "this button is out of date" (src/kube/rollout-operations.ts). */
const STALE_BUTTON_REFUSALS: ReadonlySet<string> = new Set(['changed', 'not-paused', 'not-observed', 'left-paused-by-spec']);

function staleButton(details: unknown): boolean {
  const why = (details as { why?: unknown } | undefined)?.why;
  return typeof why === 'string' && STALE_BUTTON_REFUSALS.has(why);
}

/**
 * A refused or failed action: the first approval stands again, and the attempt is recorded as
 * failed. `inThread`: a failure (the cluster erred mid-action) is the channel's business too.
 */
async function notDone<D>(ctx: CommandContext, attempt: Attempt<D>, firstApprover: string | undefined, reason: string, before: unknown, inThread = true): Promise<void> {
  if (firstApprover && attempt.approvalKey) await ctx.approvals.restore(attempt.approvalKey, firstApprover);
  await record(ctx, attempt, 'failed', reason, before !== undefined ? { before } : {});
  if (inThread) await threadLine(ctx, attempt.where.pipeline.name, attempt.releaseId, `${ICON.failed} ${person(ctx)} tried to ${attempt.describe}: ${reason}`);
}
