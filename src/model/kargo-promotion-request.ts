/**
 * A Kargo PromotionRequest (Kargo main / 1.12, `api/v1alpha1/promotion_request_types.go`): how a
 * target-aware Stage (one with `spec.targets`) is promoted. Kargo's API server creates it with its
 * own client when someone with the `promote` verb on the Stage asks; it fans the Freight out to the
 * Stage's Targets as child Promotions. Read from the API's 201 answer and from the cluster.
 */
import { z } from 'zod';
import { clusterObjectMetaSchema, longText, opt } from './meta.js';

/** Pending | Running | Succeeded | Failed | Errored (no Aborted: a PromotionRequest is not aborted itself). */
export const PROMOTION_REQUEST_TERMINAL_PHASES: ReadonlySet<string> = new Set(['Succeeded', 'Failed', 'Errored']);

export const promotionRequestSchema = z.looseObject({
  apiVersion: opt(longText),
  kind: opt(longText),
  metadata: clusterObjectMetaSchema,
  spec: z.looseObject({
    stage: longText,
    freight: longText,
    targets: opt(z.array(z.looseObject({ name: longText })).max(10_000)),
  }),
  status: opt(
    z.looseObject({
      phase: opt(longText),
      startedAt: opt(longText),
      finishedAt: opt(longText),
      targets: opt(z.array(z.looseObject({ name: longText, promotion: opt(longText), phase: opt(longText) })).max(10_000)),
      summary: opt(z.record(z.string(), z.number())),
    }),
  ),
});
export type PromotionRequest = z.infer<typeof promotionRequestSchema>;

/** What a Stage records of its PromotionRequests (`status.currentPromotionRequest` / `lastPromotionRequest`). */
export const promotionRequestRefSchema = z.looseObject({
  name: longText,
  freight: opt(z.looseObject({ name: opt(longText) })),
  phase: opt(longText),
  finishedAt: opt(longText),
});
