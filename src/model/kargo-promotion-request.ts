/**
 * A Kargo PromotionRequest (Kargo main / 1.12, `api/v1alpha1/promotion_request_types.go`): how a
 * target-aware Stage (one with `spec.targets`) is promoted. Kargo's API server creates it with its
 * own client when someone with the `promote` verb on the Stage asks; it fans the Freight out to the
 * Stage's Targets as child Promotions. Read from the API's 201 answer and from the cluster.
 */
import { z } from 'zod';
import { clusterObjectMetaSchema, KARGO, longId, ofType, opt } from './meta.js';

/** Pending | Running | Succeeded | Failed | Errored (no Aborted: a PromotionRequest is not aborted itself). */
export const PROMOTION_REQUEST_TERMINAL_PHASES: ReadonlySet<string> = new Set(['Succeeded', 'Failed', 'Errored']);

/** Every string a PromotionRequest holds is a name, a phase or a time: refused when too long, never cut. */
export const promotionRequestSchema = ofType(
  { kind: 'PromotionRequest', apiVersions: KARGO },
  z.looseObject({
    metadata: clusterObjectMetaSchema,
    spec: z.looseObject({
      stage: longId,
      freight: longId,
      targets: opt(z.array(z.looseObject({ name: longId })).max(10_000)),
    }),
    status: opt(
      z.looseObject({
        phase: opt(longId),
        startedAt: opt(longId),
        finishedAt: opt(longId),
        targets: opt(z.array(z.looseObject({ name: longId, promotion: opt(longId), phase: opt(longId) })).max(10_000)),
        summary: opt(z.record(z.string(), z.number())),
      }),
    ),
  }),
);
export type PromotionRequest = z.infer<typeof promotionRequestSchema>;

/** What a Stage records of its PromotionRequests (`status.currentPromotionRequest` / `lastPromotionRequest`). */
export const promotionRequestRefSchema = z.looseObject({
  name: longId,
  freight: opt(z.looseObject({ name: opt(longId) })),
  phase: opt(longId),
  finishedAt: opt(longId),
});
