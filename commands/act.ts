/**
 * Every cluster-changing attempt goes through here: permission, the optional second approver,
 * the action, and the record of it. Who decides is the cluster's `authorization`: `config` (the
 * stages' permissions; the write is Glidepath's service account's, so the audit entry is the only
 * record of the person), `kubernetes` (the write is sent as the person's Kubernetes identity, after
 * a SubjectAccessReview, so the cluster's RBAC decides and its audit log names them) or `both`.
 */
import { KubeActionError } from '../src/kube/errors.js';
import type { AccessAttributes, KubeIdentity } from '../src/kube/impersonation.js';
import { authorizationOf, clusterAllows } from '../src/policy/cluster-authorization.js';
import { authorize, type ClusterAction, type Decision } from '../src/policy/permissions.js';
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
  /**
   * The permissions the write needs in `where.stage.cluster`, asked of the cluster before it is
   * sent when its authorization is `kubernetes` or `both` (docs/actions.md lists them per action).
   */
  writes: AccessAttributes[];
  /** `as`: the Kubernetes identity every write must be sent as; undefined for Glidepath's own. */
  run(as: KubeIdentity | undefined): Promise<AttemptResult<D>>;
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

async function record<D>(ctx: CommandContext, attempt: Attempt<D>, result: AuditResult, reason: string, extra: { before?: unknown; after?: unknown; sentAs?: KubeIdentity } = {}): Promise<void> {
  const { sentAs, ...states } = extra;
  const entry = {
    actor: { slackUserId: ctx.user.id, ...(ctx.user.name ? { name: ctx.user.name } : {}) },
    ...(sentAs ? { sentAs: { user: sentAs.user, groups: [...sentAs.groups] } } : {}),
    action: attempt.action,
    target: attempt.target,
    result,
    reason,
    pipeline: attempt.where.pipeline.name,
    stage: attempt.where.stage.name,
    ...(attempt.releaseId ? { releaseId: attempt.releaseId } : {}),
    ...states,
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

/**
 * Who may: the config's permissions, the cluster's RBAC for the person's Kubernetes identity, or
 * both (each must allow), per the cluster's `authorization`. `sentAs`: the identity the write
 * will be sent as. A cluster that cannot be asked fails the attempt (nothing was sent).
 */
export async function permission(ctx: CommandContext, attempt: Pick<Attempt<unknown>, 'action' | 'where' | 'writes'>): Promise<{ kind: 'decided'; decision: Decision; sentAs?: KubeIdentity } | { kind: 'failed'; reason: string; error: unknown }> {
  const { pipeline, stage } = attempt.where;
  const mode = authorizationOf(ctx.config, stage.cluster);
  const byConfig = mode === 'kubernetes' ? undefined : await authorize(ctx.config, { pipeline: pipeline.name, stage: stage.name }, attempt.action, ctx.user.id, ctx.groups);
  if (mode === 'config' || (byConfig && !byConfig.allowed)) return { kind: 'decided', decision: byConfig! };
  let byCluster;
  try {
    byCluster = await clusterAllows(ctx.kube, ctx.identities, stage.cluster, ctx.user.id, attempt.writes);
  } catch (err) {
    const why = (err as Error).message;
    return { kind: 'failed', reason: `Glidepath could not ask cluster ${stage.cluster} whether you may (${why}); nothing was sent`, error: err };
  }
  const sentAs = byCluster.identity ? { sentAs: byCluster.identity } : {};
  if (!byCluster.allowed) return { kind: 'decided', decision: { allowed: false, reason: byCluster.reason }, ...sentAs };
  const via = `the Kubernetes RBAC of ${stage.cluster} for ${byCluster.identity.user} (mapped by ${byCluster.via === 'table' ? 'identities.users' : 'Slack profile email'})`;
  const requireTwoApprovers = byConfig?.allowed ? byConfig.requireTwoApprovers : attempt.action === 'approve' && (stage.permissions?.requireTwoApprovers ?? false);
  return { kind: 'decided', decision: { allowed: true, via: byConfig?.allowed ? `${byConfig.via} and ${via}` : via, requireTwoApprovers }, ...sentAs };
}

const ICON: Record<AuditResult, string> = { allowed: ':hourglass_flowing_sand:', denied: ':no_entry:', failed: ':x:', done: ':white_check_mark:' };

export async function act<D>(ctx: CommandContext, attempt: Attempt<D>): Promise<Outcome<D>> {
  const where = label(attempt.where);
  // Done and first approvals mark the clicked message (src/slack/listeners/actions/buttons.ts).
  const line = (result: AuditResult, text: string) => threadLine(ctx, attempt.where.pipeline.name, attempt.releaseId, `${ICON[result]} ${text}`, result === 'done' || result === 'allowed');
  const gate = await permission(ctx, attempt);
  if (gate.kind === 'failed') {
    await record(ctx, attempt, 'failed', gate.reason);
    return gate;
  }
  const { decision, sentAs } = gate;
  if (!decision.allowed) {
    await record(ctx, attempt, 'denied', decision.reason, sentAs ? { sentAs } : {});
    await line('denied', `${person(ctx)} tried to ${attempt.describe} (${where}): refused, ${decision.reason}`);
    return { kind: 'denied', reason: decision.reason };
  }
  const as = sentAs ? { sentAs } : {};
  let firstApprover: string | undefined;
  if (decision.requireTwoApprovers && attempt.approvalKey) {
    const second = await ctx.approvals.approve(attempt.approvalKey, ctx.user.id);
    if (second.kind === 'same-person') {
      const reason = `you already approved this; ${where} needs a second, different person to approve`;
      await record(ctx, attempt, 'denied', reason, as);
      return { kind: 'denied', reason };
    }
    if (second.kind === 'first') {
      const summary = `${person(ctx)} approved: 1 of 2 approvals to ${attempt.describe}; ${where} needs a second, different person to approve`;
      await record(ctx, attempt, 'allowed', 'first of two approvals recorded; nothing was changed yet', as);
      await line('allowed', summary);
      return { kind: 'first-approval', summary };
    }
    firstApprover = second.firstApprover;
  }
  await record(ctx, attempt, 'allowed', `allowed via ${decision.via}${firstApprover ? `, second approver after ${firstApprover}` : ''}`, as);
  const also = firstApprover ? ` (second approver, after <@${firstApprover}>)` : '';
  let result: AttemptResult<D>;
  try {
    result = await attempt.run(sentAs);
  } catch (err) {
    const reason = err instanceof KubeActionError ? err.message : `unexpected error: ${(err as Error).message}`;
    await notDone(ctx, attempt, firstApprover, reason, undefined, true, sentAs);
    if (!(err instanceof KubeActionError)) ctx.logger.error({ err }, 'action failed unexpectedly');
    return { kind: 'failed', reason, error: err };
  }
  if (result.kind === 'refused') {
    // A stale button (the object moved on since it was shown): nothing changed and nothing is the
    // team's business, so the answer is for the person alone (ephemeral) and the audit. A gate
    // that held the action (stale Argo CD state, earlier steps unfinished, Kargo said no) is part
    // of the release's story, and its thread is told who tried and why not.
    await notDone(ctx, attempt, firstApprover, result.reason, result.before, !staleButton(result.details), sentAs);
    return { kind: 'refused', reason: result.reason, details: result.details };
  }
  await record(ctx, attempt, 'done', result.summary, { before: result.before, after: result.after, ...as });
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
async function notDone<D>(ctx: CommandContext, attempt: Attempt<D>, firstApprover: string | undefined, reason: string, before: unknown, inThread = true, sentAs?: KubeIdentity): Promise<void> {
  if (firstApprover && attempt.approvalKey) await ctx.approvals.restore(attempt.approvalKey, firstApprover);
  await record(ctx, attempt, 'failed', reason, { ...(before !== undefined ? { before } : {}), ...(sentAs ? { sentAs } : {}) });
  if (inThread) await threadLine(ctx, attempt.where.pipeline.name, attempt.releaseId, `${ICON.failed} ${person(ctx)} tried to ${attempt.describe}: ${reason}`);
}
