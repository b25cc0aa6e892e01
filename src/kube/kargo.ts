/**
 * Kargo through the Kubernetes API (docs/actions.md: Promotions are created as Kargo resources;
 * only target-aware Stages go through Kargo's API server, kargo-requests.ts): Stages by
 * label selector or name pattern, the Freight a Stage may take, Promotions created with a placeholder
 * name (Kargo's webhook names them `<stage>.<ulid>.<freight7>`: the real name is read from the
 * response), and a Promotion followed on a watch until it ends.
 */
import type { KubeApi } from './api.js';
import { KubeActionError, type KubeCall } from './errors.js';
import { done, refused, type Refusable } from './refusal.js';
import { freightAvailability, freightLabel, type Availability } from './kargo-availability.js';
import { summarizeStage, type StageEvidence, type StageHealthSummary } from '../model/kargo-health.js';
import { readStage } from '../model/kargo-stage-reading.js';
import { followObject } from './follow-object.js';
import { getFreight, getStage, listFreight, listStages } from './reads.js';
import { PROMOTIONS } from './resources.js';
import { RBAC_FILE } from './verbs.js';
import type { Freight } from '../model/kargo-freight.js';
import { promotionSchema, type Promotion } from '../model/kargo-promotion.js';
import type { Stage } from '../model/kargo-stage.js';
import { parseObject } from './parse-object.js';
import type { KargoApiClient } from './kargo-api.js';
import { isTargetAware } from '../model/kargo-stage-reading.js';
import { requestPromotion, type RequestRefusal } from './kargo-requests.js';
import type { PromotionRequest } from '../model/kargo-promotion-request.js';
import { selectsKargoStage, type KargoStageSelection } from '../model/kargo-stage-selector.js';

export const TERMINAL_PROMOTION_PHASES: ReadonlySet<string> = new Set(['Succeeded', 'Failed', 'Errored', 'Aborted']);
const ALIAS_LABEL = 'kargo.akuity.io/alias';

/**
 * The Stages a selection means, sorted by name: the label part goes to the API server as a
 * labelSelector, the name part (exact, glob:, regex:) is matched here, as Kargo matches it.
 */
export async function selectStages(api: KubeApi, selection: KargoStageSelection): Promise<Stage[]> {
  const { items } = await listStages(api, selection.project, selection.labels ? { labelSelector: selection.labels.text } : {});
  return items
    .filter((s) => selectsKargoStage(selection, { namespace: s.metadata.namespace ?? selection.project, name: s.metadata.name, labels: s.metadata.labels ?? {} }))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

function newestFirst(a: Freight, b: Freight): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return tb - ta || b.metadata.name.localeCompare(a.metadata.name);
}

export interface AvailableFreight {
  stage: string;
  /** Newest first. */
  available: { freight: Freight; reason: string }[];
  newest?: Freight;
}

export async function availableFreight(api: KubeApi, project: string, stageName: string, options: { now?: () => number } = {}): Promise<AvailableFreight> {
  const stage = await getStage(api, project, stageName);
  const { items } = await listFreight(api, project);
  const now = (options.now ?? Date.now)();
  const available = items
    .map((freight) => ({ freight, verdict: freightAvailability(stage, freight, now) }))
    .filter((f) => f.verdict.available)
    .sort((a, b) => newestFirst(a.freight, b.freight))
    .map((f) => ({ freight: f.freight, reason: f.verdict.reason }));
  return { stage: stageName, available, ...(available[0] ? { newest: available[0].freight } : {}) };
}

/** Freight by name, or by alias as Kargo's CLI accepts it. */
async function findFreight(api: KubeApi, project: string, nameOrAlias: string, call: KubeCall): Promise<Freight> {
  try {
    return await getFreight(api, project, nameOrAlias);
  } catch (err) {
    if (!(err instanceof KubeActionError) || err.kind !== 'not-found') throw err;
  }
  const { items } = await listFreight(api, project, { labelSelector: `${ALIAS_LABEL}=${nameOrAlias}` });
  if (items.length === 1) return items[0]!;
  throw new KubeActionError('not-found', `Freight ${nameOrAlias} was not found in ${api.cluster}/${project} (by name or alias); nothing was changed`, call, 404);
}

/** What was created: a Promotion (a classic Stage), or through Kargo's API a PromotionRequest (a target-aware Stage). */
export type PromoteResult = {
  /** The name Kargo gave it (never the placeholder sent). */
  name: string;
  freight: Freight;
  availability: Availability;
} & ({ via: 'promotion'; promotion: Promotion } | { via: 'promotion-request'; request: PromotionRequest });

/** Why a promotion was not created: Kargo could not or would not take it. */
export type PromoteRefusal = { why: 'control-flow-stage' } | { why: 'unavailable'; availability: Availability } | RequestRefusal;

export type PromoteOutcome = Refusable<PromoteResult, PromoteRefusal>;

/**
 * Promotes `freight` (name or alias) to `stage`, after checking Kargo's availability rule: a
 * Promotion created through the Kubernetes API for a classic Stage, a PromotionRequest through
 * Kargo's API (`kargoApi`) for a target-aware one (kargo-requests.ts).
 */
export async function promote(api: KubeApi, project: string, stageName: string, freightNameOrAlias: string, options: { now?: () => number; kargoApi?: KargoApiClient } = {}): Promise<PromoteOutcome> {
  const call: KubeCall = { cluster: api.cluster, verb: 'create', resource: 'promotions', namespace: project, name: stageName };
  const stage = await getStage(api, project, stageName);
  if ((stage.spec?.promotionTemplate?.spec?.steps ?? []).length === 0) {
    return refused(`Stage ${stageName} in ${api.cluster}/${project} has no promotion steps (a control-flow Stage): Kargo cannot promote to it; nothing was changed`, call, { why: 'control-flow-stage' });
  }
  const freight = await findFreight(api, project, freightNameOrAlias, call);
  const availability = freightAvailability(stage, freight, (options.now ?? Date.now)());
  if (!availability.available) {
    return refused(`${freightLabel(freight)} is not available to Stage ${stageName}: ${availability.reason}; nothing was changed`, call, { why: 'unavailable', availability });
  }
  if (isTargetAware(stage)) {
    const asked = await requestPromotion(options.kargoApi, api.cluster, project, stageName, freight.metadata.name);
    if (asked.kind === 'refused') return asked;
    return done({ via: 'promotion-request', name: asked.request.metadata.name, request: asked.request, freight, availability });
  }
  let created: unknown;
  try {
    created = await api.create(PROMOTIONS, project, {
      apiVersion: `${PROMOTIONS.group}/${PROMOTIONS.version}`,
      kind: PROMOTIONS.kind,
      // A placeholder: Kargo's webhook replaces the name.
      metadata: { generateName: 'promo-', namespace: project },
      spec: { stage: stageName, freight: freight.metadata.name },
    });
  } catch (err) {
    if (err instanceof KubeActionError && err.kind === 'invalid') {
      const why = typeof err.details?.serverMessage === 'string' ? err.details.serverMessage : err.message;
      if (/not permitted to promote|missing "promote"/.test(why)) {
        // Kargo's webhook checks the custom verb with a SubjectAccessReview: an RBAC gap, named as one.
        throw new KubeActionError('forbidden', `Glidepath's service account may not promote stages in ${api.cluster}/${project} (Stage ${stageName}); nothing was changed: add the rule from ${RBAC_FILE}`, { ...call, verb: 'promote', resource: 'stages' }, err.status, err.details, { cause: err });
      }
      throw new KubeActionError('invalid', `Kargo refused to promote ${freightLabel(freight)} to Stage ${stageName} in ${api.cluster}/${project}: ${why}; nothing was changed`, err.call, err.status, err.details, { cause: err });
    }
    throw err;
  }
  const promotion = parseObject(promotionSchema, created, { ...call, verb: 'get' });
  return done({ via: 'promotion', name: promotion.metadata.name, promotion, freight, availability });
}

export interface FollowResult {
  promotion: Promotion;
  phase?: string;
  timedOut: boolean;
}

/** Follows a Promotion on a watch until a terminal phase (follow-object.ts); `onPhase` hears every phase change. */
export async function followPromotion(api: KubeApi, project: string, name: string, options: { timeoutMs: number; onPhase?: (phase: string, promotion: Promotion) => void }): Promise<FollowResult> {
  const followed = await followObject(api, {
    resource: PROMOTIONS,
    schema: promotionSchema,
    namespace: project,
    name,
    read: (promotion) => promotion.status?.phase ?? undefined,
    isFinal: (phase) => TERMINAL_PROMOTION_PHASES.has(phase),
    deletedMessage: `Promotion ${name} was deleted in ${api.cluster}/${project} before it finished`,
    timeoutMs: options.timeoutMs,
    ...(options.onPhase ? { onChange: options.onPhase } : {}),
  });
  return { promotion: followed.object, ...(followed.state ? { phase: followed.state } : {}), timedOut: followed.timedOut };
}

/**
 * The Stage judged as the thread judges it (src/model/kargo-health.ts): with the latch of the
 * release that follows it (`followed`), else the cluster's evidence, the Freight's `verifiedIn`
 * included (read here; Kargo garbage-collects old Freight, and the judgement then rests on the
 * Stage alone).
 */
export async function stageHealth(api: KubeApi, project: string, stageName: string, evidence: Omit<StageEvidence, 'freightVerifiedAt'> = {}): Promise<StageHealthSummary> {
  const stage = await getStage(api, project, stageName);
  const freightName = readStage(stage).freight?.name;
  let freight: Freight | undefined;
  if (freightName) {
    try {
      freight = await getFreight(api, project, freightName);
    } catch (err) {
      if (!(err instanceof KubeActionError) || err.kind !== 'not-found') throw err;
    }
  }
  const verifiedAt = freight?.status?.verifiedIn?.[stageName]?.verifiedAt;
  return summarizeStage(stage, { ...evidence, ...(verifiedAt ? { freightVerifiedAt: verifiedAt } : {}) });
}
