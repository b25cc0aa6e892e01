/**
 * Target-aware Kargo Stages (Kargo main / 1.12: a Stage with `spec.targets`). Kargo refuses a
 * Promotion created directly for one; it is promoted through Kargo's API, whose server creates a
 * PromotionRequest with its own client after checking the `promote` verb on the Stage for the
 * caller's token (docs/actions.md). Its progress is read where Kargo records it for readers
 * without PromotionRequest permissions: the Stage's `status.currentPromotionRequest` and
 * `lastPromotionRequest` ({name, freight, phase, finishedAt}).
 */
import type { KubeApi } from './api.js';
import { KubeActionError, type KubeCall } from './errors.js';
import type { KargoApiClient, KargoApiRefusal } from './kargo-api.js';
import { parseObject } from './parse-object.js';
import { followObject } from './follow-object.js';
import { done, refused, type Refusable } from './refusal.js';
import { STAGES } from './resources.js';
import { PROMOTION_REQUEST_TERMINAL_PHASES, promotionRequestSchema, type PromotionRequest } from '../model/kargo-promotion-request.js';
import { stageSchema, type Stage } from '../model/kargo-stage.js';

/** Kargo's `IsTargetAware` (the presence of `spec.targets` decides): the model's, which the Stage reading uses too. */

export type RequestRefusal = { why: 'no-kargo-api' } | { why: 'kargo-api'; refusal: KargoApiRefusal };

/** Asks Kargo's API to promote `freight` (its name) to a target-aware Stage; the PromotionRequest Kargo created, or why not. */
export async function requestPromotion(kargoApi: KargoApiClient | undefined, cluster: string, project: string, stage: string, freight: string): Promise<Refusable<{ request: PromotionRequest }, RequestRefusal>> {
  const call: KubeCall = { cluster, verb: 'promote', resource: 'stages', namespace: project, name: stage };
  if (!kargoApi) {
    return refused(
      `Stage ${stage} in ${cluster}/${project} selects Targets (spec.targets): Kargo refuses a Promotion created for it and promotes it only through Kargo's API, which is not configured for cluster ${cluster}; nothing was changed. ` +
        `Set clusters[].kargoApi.url for ${cluster} in the config and its token in KARGO_API_TOKENS (${cluster}=<token of a role with the promote verb on its Stages>)`,
      call,
      { why: 'no-kargo-api' },
    );
  }
  const answer = await kargoApi.promoteToStage(project, stage, { freight });
  if (answer.kind === 'refused') return refused(answer.reason, answer.call, { why: 'kargo-api', refusal: answer.details });
  const request = parseObject(promotionRequestSchema, answer.body, { ...call, verb: 'get', resource: 'promotionrequests' });
  if (request.kind !== undefined && request.kind !== 'PromotionRequest') {
    throw new KubeActionError('malformed', `Kargo's API answered the promotion of target-aware Stage ${stage} in ${cluster}/${project} with a ${request.kind}, not a PromotionRequest; look at the Stage before retrying`, call, answer.status);
  }
  return done({ request });
}

/** The Stage's view of one PromotionRequest: current while it fans out, last once it ended. */
function requestPhase(stage: Stage, name: string): string | undefined {
  const current = stage.status?.currentPromotionRequest;
  const last = stage.status?.lastPromotionRequest;
  if (last?.name === name) return last.phase ?? undefined;
  if (current?.name === name) return current.phase ?? 'Pending';
  return undefined;
}

export interface FollowRequestResult {
  stage: Stage;
  phase?: string;
  timedOut: boolean;
}

/**
 * Follows PromotionRequest `name` through its Stage's status, on a watch of the Stage, until a
 * terminal phase (Succeeded, Failed, Errored; follow-object.ts); `onPhase` hears every phase change.
 */
export async function followPromotionRequest(api: KubeApi, project: string, stageName: string, name: string, options: { timeoutMs: number; onPhase?: (phase: string, stage: Stage) => void }): Promise<FollowRequestResult> {
  const followed = await followObject(api, {
    resource: STAGES,
    schema: stageSchema,
    namespace: project,
    name: stageName,
    read: (stage) => requestPhase(stage, name),
    isFinal: (phase) => PROMOTION_REQUEST_TERMINAL_PHASES.has(phase),
    deletedMessage: `Stage ${stageName} was deleted in ${api.cluster}/${project} before PromotionRequest ${name} finished`,
    timeoutMs: options.timeoutMs,
    ...(options.onPhase ? { onChange: options.onPhase } : {}),
  });
  return { stage: followed.object, ...(followed.state ? { phase: followed.state } : {}), timedOut: followed.timedOut };
}
