/**
 * The writes the engine sends, one builder per kind: a canary step approved, a Rollout aborted, a
 * RollingSync step synced, stale Applications refreshed, Freight promoted in Kargo. Each names the
 * permissions it needs (src/kube/write-access.ts) and sends through the src/kube operation that
 * guards it (every write carries the state it read). Only engine.ts calls `send`.
 */
import { progressText, short } from '../kube/freshness.js';
import type { FreshnessProgress, FreshnessSnapshot, WaitFreshResult } from '../kube/freshness-reader.js';
import { refreshAndWait } from '../kube/freshness-reader.js';
import { freightLabel } from '../kube/kargo-availability.js';
import { promote, type PromoteOutcome } from '../kube/kargo.js';
import { roundsText } from '../kube/refresh-rounds.js';
import type { ApplicationCore } from '../model/application.js';
import type { WindowSubject } from '../policy/sync-windows.js';
import { staleReason, stepsOfChildren, syncRollingSyncStep, type RollingSyncRefusal } from '../kube/rolling-sync.js';
import { abortRollout, approveCanaryStep, type ExpectedCanaryStep, type RolloutRefusal } from '../kube/rollout-operations.js';
import { applicationsAccess, approveCanaryAccess, kargoPromoteAccess, rolloutStatusAccess } from '../kube/write-access.js';
import { freshnessRefreshRounds } from '../config/durations.js';
import type { Freight } from '../model/kargo-freight.js';
import { abortActionKey, resumeActionKey } from '../releases/reduce/own-action-keys.js';
import { quotedReason, rejectedState } from './rejections.js';
import type { ActionContext, Intent, StageRef } from './types.js';

export interface ObjectRef {
  cluster: string;
  namespace: string;
  name: string;
}

/** What a sync window is matched on (src/policy/sync-windows.ts). */
const windowSubject = (app: ApplicationCore): WindowSubject => ({ name: app.metadata.name, project: app.spec?.project, destination: app.spec?.destination });

const key = (ref: ObjectRef): string => `${ref.cluster}/${ref.namespace}/${ref.name}`;

/** Approve a Rollout paused at a canary step: the same patches as `kubectl argo rollouts promote`. */
export function canaryStepApproval(ctx: ActionContext, ref: ObjectRef, expected: ExpectedCanaryStep): Intent<RolloutRefusal> {
  const target = key(ref);
  return {
    action: 'approve',
    target,
    cluster: ref.cluster,
    describe: `approve step ${expected.stepIndex + 1} of ${target}`,
    writes: approveCanaryAccess(ref.namespace, ref.name),
    expected: `${target}@g${expected.generation}#${expected.podHash}#s${expected.stepIndex}`,
    async send(api) {
      // Recorded before the patch: the fact showing the pause ended must find it (else "resumed outside Glidepath").
      const mark = resumeActionKey(expected.podHash, expected.stepIndex);
      await ctx.ownActions?.record(target, mark, ctx.user.id);
      const result = await approveCanaryStep(api, ref.namespace, ref.name, expected);
      if (result.kind === 'refused') {
        await ctx.ownActions?.forget(target, mark, ctx.user.id);
        return { ...result, before: result.details.before };
      }
      return { kind: 'done', summary: `approved step ${expected.stepIndex + 1} of ${target}: the canary moves on`, before: result.before, after: result.after };
    },
  };
}

/** Abort a Rollout: status.abort=true on the status subresource; `podHash` is the version the dialog named. */
export function rolloutAbort(ctx: ActionContext, ref: ObjectRef, podHash: string | undefined): Intent<RolloutRefusal> {
  const target = key(ref);
  return {
    action: 'abort',
    target,
    cluster: ref.cluster,
    describe: `abort ${target}`,
    writes: rolloutStatusAccess(ref.namespace, ref.name),
    async send(api) {
      // Recorded before the patch: the fact showing the abort must find it (else "aborted outside Glidepath").
      const mark = abortActionKey(podHash);
      await ctx.ownActions?.record(target, mark, ctx.user.id);
      const result = await abortRollout(api, ref.namespace, ref.name, podHash ? { podHash } : undefined);
      if (result.kind === 'refused') {
        await ctx.ownActions?.forget(target, mark, ctx.user.id);
        return { ...result, before: result.details.before };
      }
      return { kind: 'done', summary: `aborted ${target}: traffic goes back to the stable version`, before: result.before, after: result.after };
    },
  };
}

/** Sync a RollingSync step's Applications at the approved revision, only on fresh state (the freshness gate). */
export function rollingSyncStep(ctx: ActionContext, ref: ObjectRef, step: number, revision: string): Intent<RollingSyncRefusal> {
  const target = key(ref);
  return {
    action: 'approve',
    target,
    cluster: ref.cluster,
    describe: `approve RollingSync step ${step} of ${target} at ${short(revision)}`,
    // The step's children are Applications in the ApplicationSet's namespace.
    writes: applicationsAccess(ref.namespace),
    expected: `${target}@appset#${revision}#s${step}`,
    syncs: async (reads) => {
      // The step's children by the controller's rules, from the read the freshness gate judges too.
      const snapshot = await reads.freshness(ref.namespace, ref.name);
      const steps = stepsOfChildren(snapshot.appSet, snapshot.children);
      return snapshot.children.filter((a) => steps.get(a.metadata.name) === step).map(windowSubject);
    },
    freshness: { namespace: ref.namespace, appSet: ref.name, step, refusal: (stale) => ({ reason: staleReason(ref.name, step, stale), details: { why: 'stale', stale } }) },
    async send(api, as, read) {
      const initiatedBy = `glidepath:${as?.user ?? ctx.user.id}`;
      const result = await syncRollingSyncStep(api, ref.namespace, ref.name, step, revision, { initiatedBy, reader: ctx.clusters.api(ref.cluster), ...(read.snapshot ? { snapshot: read.snapshot } : {}) });
      if (result.kind === 'refused') return result;
      if (result.synced.length === 0 && result.failed.length > 0) throw result.failed[0]!.error;
      const parts = [`approved RollingSync step ${step} of ${target} at ${short(revision)}: syncing ${result.synced.join(', ') || 'nothing'}`];
      if (result.skipped.length > 0) parts.push(`skipped ${result.skipped.map((s) => `${s.name} (${s.why})`).join(', ')}`);
      if (result.failed.length > 0) parts.push(`NOT synced: ${result.failed.map((f) => `${f.name} (${f.error.message})`).join('; ')}`);
      return { kind: 'done', summary: parts.join('; '), after: { synced: result.synced, skipped: result.skipped, failed: result.failed.map((f) => f.name) } };
    },
  };
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

export interface RefreshWanted {
  appSet: ObjectRef;
  /** What checkFreshness read just before: its stale children are the ones refreshed. */
  snapshot: FreshnessSnapshot;
  timeoutMs: number;
  /** The clock freshness is judged by (Date.now unless given). */
  now?: () => number;
  /** Once allowed, before the first patch (the progress message, say). */
  onAllowed?: () => Promise<void>;
  onProgress?: (progress: FreshnessProgress) => void;
  /** The wait's result, once the refresh was sent. */
  onWaited?: (waited: WaitFreshResult) => void;
}

/** Ask Argo CD to refresh an ApplicationSet's stale Applications, again in rounds while they stay stale. */
export function applicationsRefresh(ctx: ActionContext, wanted: RefreshWanted): Intent<undefined> {
  const { appSet, snapshot } = wanted;
  const target = key(appSet);
  return {
    action: 'refresh',
    target,
    cluster: appSet.cluster,
    describe: `refresh ${snapshot.report.stale.length} stale Applications of ${target}`,
    // The children are Applications in the ApplicationSet's namespace.
    writes: applicationsAccess(appSet.namespace),
    // The stale children of the snapshot the command read: no read of its own.
    syncs: () => {
      const stale = new Set(snapshot.report.stale.map((c) => c.name));
      return snapshot.children.filter((a) => stale.has(a.metadata.name)).map(windowSubject);
    },
    async send(api) {
      await wanted.onAllowed?.();
      const result = await refreshAndWait(api, appSet.namespace, snapshot, {
        timeoutMs: wanted.timeoutMs,
        rounds: freshnessRefreshRounds(ctx.config),
        ...(wanted.now ? { now: wanted.now } : {}),
        ...(wanted.onProgress ? { onProgress: wanted.onProgress } : {}),
      });
      wanted.onWaited?.(result);
      const said = refreshOutcome(target, result);
      return { kind: 'done', summary: `refreshed ${result.refreshed.requested.length} Applications of ${target}; ${said.headline}`, after: { refreshed: result.refreshed.requested, stale: result.report.stale.map((c) => c.name) } };
    },
  };
}

/** What a promote created: a Promotion, or for a target-aware Stage the PromotionRequest Kargo's API created. */
export interface Created {
  kind: 'Promotion' | 'PromotionRequest';
  name: string;
  freight: Freight;
}

export interface PromoteWanted {
  cluster: string;
  project: string;
  stage: string;
  /** The Freight chosen (named, or the newest available), or why none could be. */
  freight: { kind: 'chosen'; name: string; label: string } | { kind: 'problem'; error: unknown };
  onCreated?: (created: Created) => void;
}

/** Promote Freight to a Kargo Stage: a Promotion, or through Kargo's API for a target-aware Stage. */
export function kargoPromote(ctx: ActionContext, wanted: PromoteWanted): Intent<Extract<PromoteOutcome, { kind: 'refused' }>['details']> {
  const { cluster, project, stage, freight } = wanted;
  const target = `${cluster}/${project}/${stage}`;
  return {
    action: 'promote',
    target,
    cluster,
    describe: `promote ${freight.kind === 'chosen' ? freight.label : 'the newest available Freight'} to ${target}`,
    writes: kargoPromoteAccess(project, stage),
    // What a quorum of the stage approves: this Freight to this Stage.
    ...(freight.kind === 'chosen' ? { expected: `${target}@freight#${freight.name}` } : {}),
    async send(api) {
      // Inside the engine, so that a Freight that could not be chosen is audited too.
      if (freight.kind === 'problem') throw freight.error;
      // Kargo's API (a target-aware Stage) is reached with its own token: it cannot be told the person (docs/actions.md).
      const kargoApi = ctx.clusters.get(cluster).kargoApi;
      const result = await promote(api, project, stage, freight.name, { ...(ctx.now ? { now: ctx.now } : {}), ...(kargoApi ? { kargoApi } : {}) });
      if (result.kind === 'refused') return result;
      const freightName = result.freight.metadata.name;
      if (result.via === 'promotion-request') {
        wanted.onCreated?.({ kind: 'PromotionRequest', name: result.name, freight: result.freight });
        const targets = result.request.spec.targets?.length;
        const fanOut = targets === undefined ? 'to its Targets' : `to its ${targets} Target${targets === 1 ? '' : 's'}`;
        return { kind: 'done', summary: `created PromotionRequest ${result.name} of ${freightLabel(result.freight)} to ${target} through Kargo's API (the Stage selects Targets; Kargo promotes ${fanOut})`, after: { promotionRequest: result.name, freight: freightName } };
      }
      wanted.onCreated?.({ kind: 'Promotion', name: result.name, freight: result.freight });
      return { kind: 'done', summary: `created Promotion ${result.name} of ${freightLabel(result.freight)} to ${target}`, after: { promotion: result.name, freight: freightName } };
    },
  };
}

/**
 * Reject what `held` would do, with a reason: nothing is sent to the cluster (the pause stays, the
 * step is not synced, nothing is promoted). It needs the permission `held` needs, so only someone
 * who may approve a step may hold it; the rejection is kept in Redis for the state `held` acts on.
 */
export function rejection(ctx: ActionContext, held: Intent, where: StageRef, reason: string, releaseId: string | undefined): Intent<undefined> {
  const state = rejectedState(held);
  return {
    action: held.action,
    audited: 'reject',
    target: held.target,
    cluster: held.cluster,
    describe: `reject: ${held.describe}`,
    writes: held.writes,
    async send() {
      if (!ctx.rejections || state === undefined) throw new Error(`${held.describe} cannot be rejected here (no rejection store or no state to hold)`);
      await ctx.rejections.reject(state, { by: ctx.user.id, reason, what: held.describe, pipeline: where.pipeline.name, stage: where.stage.name, ...(releaseId ? { releaseId } : {}) });
      return { kind: 'done', summary: `:no_entry_sign: rejected (${held.describe}): ${quotedReason(reason)}. Nothing was changed in the cluster; the step stays held until someone approves it, which overrides this rejection`, after: { rejected: state } };
    },
  };
}
