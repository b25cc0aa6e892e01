/** A Kargo Stage as Glidepath reads it from a cluster: the Freight it requests, its health and its Promotions. */
import { z } from 'zod';
import { freightOriginSchema } from './kargo-freight.js';
import { promotionRequestRefSchema } from './kargo-promotion-request.js';
import { clusterObjectMetaSchema, conditionSchema, longText, opt } from './meta.js';

const promotionRef = z.looseObject({ name: opt(longText), freight: opt(z.looseObject({ name: opt(longText) })) });

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
      /** Kargo main (1.12): present = a target-aware Stage, promoted through a PromotionRequest (kargo-promotion-request.ts). */
      targets: opt(z.looseObject({ selectors: opt(z.array(z.looseObject({}))) })),
    }),
  ),
  status: opt(
    z.looseObject({
      conditions: opt(z.array(conditionSchema)),
      health: opt(z.looseObject({ status: opt(longText) })),
      freightHistory: opt(z.array(z.looseObject({ id: opt(longText), items: opt(z.record(z.string(), z.looseObject({ name: opt(longText) }))) }))),
      currentPromotion: opt(promotionRef),
      lastPromotion: opt(
        promotionRef.extend({
          finishedAt: opt(longText),
          status: opt(z.looseObject({ phase: opt(longText), message: opt(longText), finishedAt: opt(longText) })),
        }),
      ),
      /** Target-aware Stages (Kargo main, 1.12): the PromotionRequest fanning out now, and the last one to end. */
      currentPromotionRequest: opt(promotionRequestRefSchema),
      lastPromotionRequest: opt(promotionRequestRefSchema),
    }),
  ),
});
export type Stage = z.infer<typeof stageSchema>;
