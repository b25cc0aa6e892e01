/** A Kargo Stage as Glidepath reads it from a cluster: the Freight it requests, its health, verification and Promotions. */
import { z } from 'zod';
import { freightOriginSchema, freightReferenceSchema } from './kargo-freight.js';
import { promotionStatusSchema } from './kargo-promotion.js';
import { promotionRequestRefSchema } from './kargo-promotion-request.js';
import { clusterObjectMetaSchema, conditionSchema, cutText, ident, KARGO, longId, longText, ofType, opt } from './meta.js';

/** `currentPromotion` / `lastPromotion`: the Promotion by name, the Freight it promotes, and (last) its whole status. */
const promotionRef = z.looseObject({ name: opt(longId), freight: opt(freightReferenceSchema) });

/** `VerificationInfo`: one verification (an Argo Rollouts AnalysisRun) of the Freight in this Stage. */
export const verificationInfoSchema = z.looseObject({
  id: opt(ident(256)),
  /** Who asked for the verification: shown, compared with nothing, so cut. */
  actor: opt(cutText(512)),
  phase: opt(ident(32)),
  message: opt(longText),
  startTime: opt(ident(64)),
  finishTime: opt(ident(64)),
  analysisRun: opt(z.looseObject({ name: opt(ident(253)), namespace: opt(ident(253)), phase: opt(ident(32)) })),
});

/** `FreightCollection`: the Freight a Stage holds (JSON key `items`), with its verifications, newest first. */
export const freightCollectionSchema = z.looseObject({
  id: opt(longId),
  items: opt(z.record(z.string(), freightReferenceSchema)),
  verificationHistory: opt(z.array(verificationInfoSchema).max(64)),
});

/** What a Stage decides on is names, phases, times and health: refused when too long; messages (in verifications, conditions, lastPromotion's status) are cut. */
export const stageSchema = ofType(
  { kind: 'Stage', apiVersions: KARGO },
  z.looseObject({
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
                  stages: opt(z.array(longId)),
                  requiredSoakTime: opt(longId),
                  availabilityStrategy: opt(longId),
                }),
              ),
            }),
          ),
        ),
        promotionTemplate: opt(z.looseObject({ spec: opt(z.looseObject({ steps: opt(z.array(z.looseObject({}))) })) })),
        verification: opt(z.looseObject({ analysisTemplates: opt(z.array(z.looseObject({ name: opt(ident(253)) })).max(64)) })),
        /** Kargo main (1.12): present = a target-aware Stage, promoted through a PromotionRequest (kargo-promotion-request.ts). */
        targets: opt(z.looseObject({ selectors: opt(z.array(z.looseObject({})).max(64)) })),
      }),
    ),
    status: opt(
      z.looseObject({
        conditions: opt(z.array(conditionSchema)),
        health: opt(z.looseObject({ status: opt(longId) })),
        freightHistory: opt(z.array(freightCollectionSchema)),
        currentPromotion: opt(promotionRef),
        lastPromotion: opt(
          promotionRef.extend({
            finishedAt: opt(longId),
            status: opt(promotionStatusSchema),
          }),
        ),
        /** Target-aware Stages (Kargo main, 1.12): the PromotionRequest fanning out now, and the last one to end. */
        currentPromotionRequest: opt(promotionRequestRefSchema),
        lastPromotionRequest: opt(promotionRequestRefSchema),
      }),
    ),
  }),
);
export type Stage = z.infer<typeof stageSchema>;
