/** A Kargo Stage as Glidepath reads it from a cluster: the Freight it requests, its health, verification and Promotions. */
import { z } from 'zod';
import { freightOriginSchema, freightReferenceSchema } from './kargo-freight.js';
import { promotionStatusSchema } from './kargo-promotion.js';
import { promotionRequestRefSchema } from './kargo-promotion-request.js';
import { clusterObjectMetaSchema, conditionSchema, longText, opt, text } from './meta.js';

/** `currentPromotion` / `lastPromotion`: the Promotion by name, the Freight it promotes, and (last) its whole status. */
const promotionRef = z.looseObject({ name: opt(longText), freight: opt(freightReferenceSchema) });

/** `VerificationInfo`: one verification (an Argo Rollouts AnalysisRun) of the Freight in this Stage. */
export const verificationInfoSchema = z.looseObject({
  id: opt(text(256)),
  actor: opt(text(512)),
  phase: opt(text(32)),
  message: opt(longText),
  startTime: opt(text(64)),
  finishTime: opt(text(64)),
  analysisRun: opt(z.looseObject({ name: opt(text(253)), namespace: opt(text(253)), phase: opt(text(32)) })),
});

/** `FreightCollection`: the Freight a Stage holds (JSON key `items`), with its verifications, newest first. */
export const freightCollectionSchema = z.looseObject({
  id: opt(longText),
  items: opt(z.record(z.string(), freightReferenceSchema)),
  verificationHistory: opt(z.array(verificationInfoSchema).max(64)),
});

export const stageSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  spec: opt(
    z.looseObject({
      requestedFreight: opt(
        z.array(
          z.looseObject({
            origin: freightOriginSchema,
            sources: opt(
              z.looseObject({
                direct: opt(z.boolean()),
                stages: opt(z.array(longText)),
                requiredSoakTime: opt(longText),
                availabilityStrategy: opt(longText),
              }),
            ),
          }),
        ),
      ),
      promotionTemplate: opt(z.looseObject({ spec: opt(z.looseObject({ steps: opt(z.array(z.looseObject({}))) })) })),
      verification: opt(z.looseObject({ analysisTemplates: opt(z.array(z.looseObject({ name: opt(text(253)) })).max(64)) })),
      /** Kargo main (1.12): present = a target-aware Stage, promoted through a PromotionRequest (kargo-promotion-request.ts). */
      targets: opt(z.looseObject({ selectors: opt(z.array(z.looseObject({})).max(64)) })),
    }),
  ),
  status: opt(
    z.looseObject({
      conditions: opt(z.array(conditionSchema)),
      health: opt(z.looseObject({ status: opt(longText) })),
      freightHistory: opt(z.array(freightCollectionSchema)),
      currentPromotion: opt(promotionRef),
      lastPromotion: opt(
        promotionRef.extend({
          finishedAt: opt(longText),
          status: opt(promotionStatusSchema),
        }),
      ),
      /** Target-aware Stages (Kargo main, 1.12): the PromotionRequest fanning out now, and the last one to end. */
      currentPromotionRequest: opt(promotionRequestRefSchema),
      lastPromotionRequest: opt(promotionRequestRefSchema),
    }),
  ),
});
export type Stage = z.infer<typeof stageSchema>;
