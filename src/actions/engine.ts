/**
 * The one action engine: every cluster write Glidepath makes for a person comes through `act`.
 * It asks the gates in order (gates.ts), sends the intent's write as the identity the permission
 * gate named (the person's own when the cluster decides, else Glidepath's service account), writes
 * ONE audit entry with every gate's decision, and tells the release thread. Listeners and commands
 * only translate Slack into a request and the outcome back into words.
 */
import type { AuditEntry, AuditResult } from '../audit/audit-log.js';
import { KubeActionError } from '../kube/errors.js';
import type { KubeIdentity } from '../kube/impersonation.js';
import { approvalsGate, freshnessGate, permissionGate, rejectionGate } from './gates.js';
import { overrideNote } from './rejections.js';
import type { ActionContext, ActionRequest, GateDecision, Outcome, SendResult, StageRef } from './types.js';

const ICON: Record<AuditResult, string> = { allowed: ':hourglass_flowing_sand:', denied: ':no_entry:', failed: ':x:', done: ':white_check_mark:' };

/** `checkout@prod`. */
export function stageLabel(where: StageRef): string {
  return `${where.pipeline.name}@${where.stage.name}`;
}

function person(ctx: ActionContext): string {
  return `<@${ctx.user.id}>`;
}

/**
 * A line in the release thread, when the release and its thread are known; never fails the action.
 * `markedByClick`: the action succeeded from a button in that same thread, whose message is edited
 * to say so; a second line saying the same would make one approval read as two.
 */
export async function threadLine(ctx: ActionContext, pipeline: string, releaseId: string | undefined, text: string, markedByClick = false): Promise<void> {
  if (!releaseId) return;
  try {
    const thread = await ctx.threads.get(pipeline, releaseId);
    if (markedByClick && thread && ctx.clicked?.channel === thread.channel && ctx.clicked.threadTs === thread.ts) return;
    if (thread) await ctx.slack.post({ text }, { channel: thread.channel, threadTs: thread.ts });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message, pipeline, releaseId }, 'could not post the action line in the release thread');
  }
}

/** The refusals that mean only "this button is out of date" (src/kube/rollout-operations.ts). */
const STALE_BUTTON_REFUSALS: ReadonlySet<string> = new Set(['changed', 'not-paused', 'not-observed', 'left-paused-by-spec']);

function staleButton(details: unknown): boolean {
  const why = (details as { why?: unknown } | undefined)?.why;
  return typeof why === 'string' && STALE_BUTTON_REFUSALS.has(why);
}

/** What the one audit entry of a request says, gathered as the request goes. */
interface Trail {
  gates: GateDecision[];
  sentAs?: KubeIdentity;
}

async function audit<D>(ctx: ActionContext, request: ActionRequest<D>, trail: Trail, result: AuditResult, reason: string, states: { before?: unknown; after?: unknown } = {}): Promise<void> {
  const { intent, where } = request;
  const entry: AuditEntry = {
    actor: { slackUserId: ctx.user.id, ...(ctx.user.name ? { name: ctx.user.name } : {}) },
    ...(trail.sentAs ? { sentAs: { user: trail.sentAs.user, groups: [...trail.sentAs.groups] } } : {}),
    action: intent.audited ?? intent.action,
    target: intent.target,
    result,
    reason,
    pipeline: where.pipeline.name,
    stage: where.stage.name,
    ...(request.releaseId ? { releaseId: request.releaseId } : {}),
    gates: trail.gates.map((g) => ({ ...g })),
    ...(request.reason ? { requestReason: request.reason } : {}),
    ...(states.before !== undefined ? { before: states.before } : {}),
    ...(states.after !== undefined ? { after: states.after } : {}),
  };
  await ctx.audit.append(entry);
  ctx.logger.info({ audit: { ...entry, before: undefined, after: undefined } }, `action ${intent.action} ${result}`);
}

export async function act<D>(ctx: ActionContext, request: ActionRequest<D>): Promise<Outcome<D>> {
  const { intent, where } = request;
  const at = stageLabel(where);
  const pipeline = where.pipeline.name;
  // Done and first approvals mark the clicked message (src/slack/listeners/actions/buttons.ts).
  const line = (result: AuditResult, text: string) => threadLine(ctx, pipeline, request.releaseId, `${ICON[result]} ${text}`, result === 'done' || result === 'allowed');
  const trail: Trail = { gates: [] };

  // 1. Permission: the config, the cluster's RBAC for the person, or both.
  const permission = await permissionGate(ctx, { action: intent.action, where, writes: intent.writes });
  trail.gates.push(permission.decision);
  if (permission.sentAs) trail.sentAs = permission.sentAs;
  if (!permission.decision.allowed) {
    const { reason } = permission.decision;
    if (permission.decision.failed) {
      await audit(ctx, request, trail, 'failed', reason);
      return { kind: 'failed', reason, error: permission.error };
    }
    await audit(ctx, request, trail, 'denied', reason);
    await line('denied', `${person(ctx)} tried to ${intent.describe} (${at}): refused, ${reason}`);
    return { kind: 'denied', reason };
  }
  // 2. Freeze windows go here (issue #23 item 5): a decision with when the window ends.

  // 3. Freshness: what the write is judged on must be what Argo CD has reconciled.
  let fresh: Awaited<ReturnType<typeof freshnessGate>>;
  try {
    fresh = await freshnessGate(ctx, intent);
  } catch (err) {
    return failed(ctx, request, trail, err, undefined);
  }
  if (fresh.decision) trail.gates.push(fresh.decision);
  if (fresh.decision && !fresh.decision.allowed && fresh.snapshot && intent.freshness) {
    const stale = fresh.snapshot.report.stale.filter((s) => (fresh.decision as { stale: string[] }).stale.includes(s.name));
    const refusal = intent.freshness.refusal(stale);
    await audit(ctx, request, trail, 'failed', refusal.reason);
    await threadLine(ctx, pipeline, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${intent.describe}: ${refusal.reason}`);
    return { kind: 'refused', reason: refusal.reason, details: refusal.details };
  }

  // 4. Approvals: the second of two different people (quorum goes here).
  const approvals = await approvalsGate(ctx, intent, where);
  if (approvals.decision) trail.gates.push(approvals.decision);
  if (approvals.decision && !approvals.decision.allowed) {
    if (approvals.decision.first) {
      const summary = `${person(ctx)} approved: 1 of 2 approvals to ${intent.describe}; ${at} needs a second, different person to approve`;
      await audit(ctx, request, trail, 'allowed', 'first of two approvals recorded; nothing was changed yet');
      await line('allowed', summary);
      return { kind: 'first-approval', summary };
    }
    const reason = `you already approved this; ${at} needs a second, different person to approve`;
    await audit(ctx, request, trail, 'denied', reason);
    return { kind: 'denied', reason };
  }
  const firstApprover = approvals.firstApprover;
  // A standing rejection of the same state never holds an approval: the approval says it overrides it.
  const rejection = await rejectionGate(ctx, intent);
  if (rejection) trail.gates.push(rejection.decision);

  // 5. The write, sent as the identity the permission gate named.
  const api = ctx.clusters.api(intent.cluster);
  let result: SendResult<D>;
  try {
    result = await intent.send(trail.sentAs ? api.as(trail.sentAs) : api, trail.sentAs, fresh.snapshot ? { snapshot: fresh.snapshot } : {});
  } catch (err) {
    return failed(ctx, request, trail, err, firstApprover);
  }
  if (result.kind === 'refused') {
    // A stale button (the object moved on since it was shown): nothing changed and nothing is the
    // team's business, so the answer is for the person alone (ephemeral) and the audit. A gate
    // that held the action (earlier steps unfinished, Kargo said no) is part of the release's
    // story, and its thread is told who tried and why not.
    await restoreFirst(ctx, request, firstApprover);
    await audit(ctx, request, trail, 'failed', result.reason, { before: result.before });
    if (!staleButton(result.details)) await threadLine(ctx, pipeline, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${intent.describe}: ${result.reason}`);
    return { kind: 'refused', reason: result.reason, details: result.details };
  }
  const also = (firstApprover ? ` (second approver, after <@${firstApprover}>)` : '') + (rejection ? overrideNote(rejection.decision.overrides) : '');
  if (rejection) await rejection.lift(ctx.user.id);
  await audit(ctx, request, trail, 'done', result.summary, { before: result.before, after: result.after });
  // Overriding a rejection is the team's business even from a button in the thread: its own line says so.
  if (rejection) await threadLine(ctx, pipeline, request.releaseId, `${ICON.done} ${person(ctx)}${also}: ${result.summary}`);
  else await line('done', `${person(ctx)}${also}: ${result.summary}`);
  return { kind: 'done', summary: `${result.summary}${also}` };
}

/** A consumed first approval stands again when the second person's action did not go through. */
async function restoreFirst<D>(ctx: ActionContext, request: ActionRequest<D>, firstApprover: string | undefined): Promise<void> {
  if (firstApprover && request.intent.expected) await ctx.approvals.restore(request.intent.expected, firstApprover);
}

/** The cluster erred mid-action (or something unexpected did): audited, and the channel's business too. */
async function failed<D>(ctx: ActionContext, request: ActionRequest<D>, trail: Trail, err: unknown, firstApprover: string | undefined): Promise<Outcome<D>> {
  const reason = err instanceof KubeActionError ? err.message : `unexpected error: ${(err as Error).message}`;
  await restoreFirst(ctx, request, firstApprover);
  await audit(ctx, request, trail, 'failed', reason);
  await threadLine(ctx, request.where.pipeline.name, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${request.intent.describe}: ${reason}`);
  if (!(err instanceof KubeActionError)) ctx.logger.error({ err }, 'action failed unexpectedly');
  return { kind: 'failed', reason, error: err };
}
