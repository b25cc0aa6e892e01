/**
 * Quorum, the approvals gate (docs/actions.md): a stage's `approvals` (or the older
 * `permissions.requireTwoApprovers`, which is `required: 2`) holds an approval until `required`
 * different people approved the very state the first one saw. Who counts is decided here, before
 * the tally: the release's author and merger (as the CI announcement named them) never count when
 * `excludeAuthor`, and with `from` only those users and members of those groups count. The tally
 * itself is Redis's (approvals.ts), keyed by the intent's `expected` state, so an approval lapses
 * when the pod hash, generation, revision, Freight or step moves on.
 */
import type { ApprovalsConfig } from '../config/approvals.js';
import type { StageConfig } from '../config/file.js';
import { stageLabel, type ActionContext, type GateDecision, type Intent, type StageRef } from './types.js';

/** What a stage asks of its approvals; `where` names the setting, for refusals. */
export interface Quorum extends Pick<ApprovalsConfig, 'required' | 'excludeAuthor'> {
  from?: readonly string[];
  setting: 'approvals' | 'permissions.requireTwoApprovers';
}

export function quorumOf(stage: StageConfig): Quorum | undefined {
  if (stage.approvals) return { ...stage.approvals, setting: 'approvals' };
  if (stage.permissions?.requireTwoApprovers) return { required: 2, excludeAuthor: false, setting: 'permissions.requireTwoApprovers' };
  return undefined;
}

/**
 * Approvals of a canary or RollingSync step; and a Kargo promote of one Freight where the stage sets
 * `approvals` (a promote is how a Kargo stage is approved). `requireTwoApprovers` was approve only.
 */
function appliesTo(quorum: Quorum, intent: Intent): boolean {
  return intent.action === 'approve' || (intent.action === 'promote' && quorum.setting === 'approvals');
}

/** The gate's answer; the engine words the rest. */
export interface ApprovalsAnswer {
  decision?: Extract<GateDecision, { gate: 'approvals' }>;
  /** Held because more approvals are needed: the progress line ("approval 1 of 2: @alice …"). */
  pending?: string;
  /** Held for a reason the release's thread should see (the author, someone who does not count). */
  tellThread?: true;
  /** Let through by the approval that met the quorum: who made it, for the done line. */
  met?: string;
  /** Takes the approval that met the quorum back, when its action did not go through. */
  reopen?: () => Promise<void>;
}

const mentions = (users: readonly string[]): string => users.map((u) => `<@${u}>`).join(', ');

/** Why the person's approval cannot count, or undefined when it can. */
async function whyNotCounted(ctx: ActionContext, quorum: Quorum, where: StageRef, releaseId: string | undefined): Promise<string | undefined> {
  const at = stageLabel(where);
  if (quorum.excludeAuthor && releaseId && ctx.releases) {
    const release = await ctx.releases.get(where.pipeline.name, releaseId);
    const role = release?.authorSlackId === ctx.user.id ? 'wrote' : release?.mergedBySlackId === ctx.user.id ? 'merged' : undefined;
    if (role) return `you ${role} release ${releaseId} (its CI announcement says so), and ${at} leaves its author and merger out of its approvals (approvals.excludeAuthor); ask someone else to approve`;
  }
  if (quorum.from) {
    if (quorum.from.includes(ctx.user.id)) return undefined;
    for (const group of quorum.from.filter((p) => p.startsWith('S'))) {
      if (await ctx.groups.isMember(group, ctx.user.id)) return undefined;
    }
    return `your approval does not count toward ${at}: its approvals.from counts only ${quorum.from.join(', ')}; ask one of them to approve`;
  }
  return undefined;
}

/**
 * An approve with a quorum: refused when the person does not count, held (and shown as progress)
 * until `required` different people approved the same state, let through by the one who meets it.
 */
export async function quorumGate(ctx: ActionContext, intent: Intent, where: StageRef, releaseId?: string): Promise<ApprovalsAnswer> {
  const quorum = quorumOf(where.stage);
  if (!quorum || !intent.expected || !appliesTo(quorum, intent)) return {};
  const state = intent.expected;
  const at = stageLabel(where);
  const notCounted = await whyNotCounted(ctx, quorum, where, releaseId);
  if (notCounted) return { decision: { gate: 'approvals', allowed: false, reason: notCounted }, tellThread: true };

  const tally = await ctx.approvals.approve(state, ctx.user.id, quorum.required);
  const { required } = quorum;
  const progress = `${tally.approvers.length} of ${required}: ${mentions(tally.approvers)}`;
  const more = required - tally.approvers.length;
  const needs = `${at} needs ${more} more approval${more === 1 ? '' : 's'} of this same state, from ${more === 1 ? 'a different person' : 'different people'}`;
  switch (tally.kind) {
    case 'same-person':
      return { decision: { gate: 'approvals', allowed: false, reason: `you already approved this (approval ${progress}); ${needs}` } };
    case 'already-reached':
      return { decision: { gate: 'approvals', allowed: false, reason: `this was approved already (approval ${progress}) and acted on; nothing more to do` } };
    case 'counted':
      return {
        decision: { gate: 'approvals', allowed: false, first: true, reason: `approval ${tally.approvers.length} of ${required} recorded; nothing was changed yet` },
        pending: `approval ${progress} to ${intent.describe}; ${needs}`,
      };
    case 'reached':
      return {
        decision: { gate: 'approvals', allowed: true, via: `approval ${tally.approvers.length} of ${required}, after ${tally.approvers.slice(0, -1).join(', ') || 'nobody else'}` },
        met: `approval ${progress}`,
        reopen: () => ctx.approvals.reopen(state, ctx.user.id),
      };
  }
}
