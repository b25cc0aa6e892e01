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
import { freezeGate } from './freeze.js';
import { actionReads } from './reads.js';
import { overrideNote } from './rejections.js';
import { untrusted } from '../text/mrkdwn.js';
import { stageLabel, type ActionContext, type ActionRequest, type GateDecision, type Outcome, type SendResult } from './types.js';

const ICON: Record<AuditResult, string> = { allowed: ':hourglass_flowing_sand:', denied: ':no_entry:', failed: ':x:', done: ':white_check_mark:' };

export { stageLabel };

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
  // The cluster reads the gates share: each made once for this action.
  const reads = actionReads(ctx.clusters.api(intent.cluster), ctx.now);

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
  // 2. Freeze windows: the config's freezes (break-glass with a reason) and Argo CD's syncWindows.
  let freeze: Awaited<ReturnType<typeof freezeGate>>;
  try {
    freeze = await freezeGate(ctx, request, reads);
  } catch (err) {
    return failed(ctx, request, trail, err, undefined);
  }
  if (freeze) trail.gates.push(freeze);
  if (freeze && !freeze.allowed) {
    await audit(ctx, request, trail, 'denied', freeze.reason);
    await line('denied', `${person(ctx)} tried to ${intent.describe} (${at}): refused, ${freeze.reason}`);
    return { kind: 'denied', reason: freeze.reason };
  }
  if (freeze?.overridden) {
    const { freezes, reason } = freeze.overridden;
    await threadLine(ctx, pipeline, request.releaseId, `:rotating_light: ${person(ctx)} broke glass over freeze ${freezes.map((f) => `'${f}'`).join(', ')} to ${intent.describe} (${at}): "${untrusted(reason, 500, { oneLine: true })}"`);
  }

  // 3. Freshness: what the write is judged on must be what Argo CD has reconciled.
  let fresh: Awaited<ReturnType<typeof freshnessGate>>;
  try {
    fresh = await freshnessGate(intent, reads);
  } catch (err) {
    return failed(ctx, request, trail, err);
  }
  if (fresh.decision) trail.gates.push(fresh.decision);
  if (fresh.decision && !fresh.decision.allowed && fresh.snapshot && intent.freshness) {
    const stale = fresh.snapshot.report.stale.filter((s) => (fresh.decision as { stale: string[] }).stale.includes(s.name));
    const refusal = intent.freshness.refusal(stale);
    await audit(ctx, request, trail, 'failed', refusal.reason);
    await threadLine(ctx, pipeline, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${intent.describe}: ${refusal.reason}`);
    return { kind: 'refused', reason: refusal.reason, details: refusal.details };
  }

  // 4. Approvals: the stage's quorum of different people, each approving this same state.
  const approvals = await approvalsGate(ctx, intent, where, request.releaseId);
  if (approvals.decision) trail.gates.push(approvals.decision);
  if (approvals.decision && !approvals.decision.allowed) {
    const { reason } = approvals.decision;
    if (approvals.pending) {
      await audit(ctx, request, trail, 'allowed', reason);
      await line('allowed', approvals.pending);
      return { kind: 'first-approval', summary: approvals.pending };
    }
    await audit(ctx, request, trail, 'denied', reason);
    if (approvals.tellThread) await line('denied', `${person(ctx)} tried to ${intent.describe} (${at}): refused, ${reason}`);
    return { kind: 'denied', reason };
  }
  const reopen = approvals.reopen;
  // A standing rejection of the same state never holds an approval: the approval says it overrides it.
  const rejection = await rejectionGate(ctx, intent);
  if (rejection) trail.gates.push(rejection.decision);

  // 5. The write, sent as the identity the permission gate named.
  const api = ctx.clusters.api(intent.cluster);
  let result: SendResult<D>;
  try {
    result = await intent.send(trail.sentAs ? api.as(trail.sentAs) : api, trail.sentAs, fresh.snapshot ? { snapshot: fresh.snapshot } : {});
  } catch (err) {
    return failed(ctx, request, trail, err, reopen);
  }
  if (result.kind === 'refused') {
    // A stale button (the object moved on since it was shown): nothing changed and nothing is the
    // team's business, so the answer is for the person alone (ephemeral) and the audit. A gate
    // that held the action (earlier steps unfinished, Kargo said no) is part of the release's
    // story, and its thread is told who tried and why not.
    await reopen?.();
    await audit(ctx, request, trail, 'failed', result.reason, { before: result.before });
    if (!staleButton(result.details)) await threadLine(ctx, pipeline, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${intent.describe}: ${result.reason}`);
    return { kind: 'refused', reason: result.reason, details: result.details };
  }
  const also = (approvals.met ? ` (${approvals.met})` : '') + (rejection ? overrideNote(rejection.decision.overrides) : '');
  if (rejection) await rejection.lift(ctx.user.id);
  await audit(ctx, request, trail, 'done', result.summary, { before: result.before, after: result.after });
  // Overriding a rejection is the team's business even from a button in the thread: its own line says so.
  if (rejection) await threadLine(ctx, pipeline, request.releaseId, `${ICON.done} ${person(ctx)}${also}: ${result.summary}`);
  else await line('done', `${person(ctx)}${also}: ${result.summary}`);
  return { kind: 'done', summary: `${result.summary}${also}` };
}

/**
 * The cluster erred mid-action (or something unexpected did): audited, and the channel's business
 * too. `reopen`: the approval that met the quorum is taken back, so the others still stand.
 */
async function failed<D>(ctx: ActionContext, request: ActionRequest<D>, trail: Trail, err: unknown, reopen?: () => Promise<void>): Promise<Outcome<D>> {
  const reason = err instanceof KubeActionError ? err.message : `unexpected error: ${(err as Error).message}`;
  await reopen?.();
  await audit(ctx, request, trail, 'failed', reason);
  await threadLine(ctx, request.where.pipeline.name, request.releaseId, `${ICON.failed} ${person(ctx)} tried to ${request.intent.describe}: ${reason}`);
  if (!(err instanceof KubeActionError)) ctx.logger.error({ err }, 'action failed unexpectedly');
  return { kind: 'failed', reason, error: err };
}
