/** A Kargo Promotion as Glidepath reads it from a cluster (after creating one, while it runs, and on the watch). */
import { z } from 'zod';
import { freightReferenceSchema } from './kargo-freight.js';
import { clusterObjectMetaSchema, ident, integer, KARGO, longId, longText, ofType, opt } from './meta.js';

/** Who asked for a Promotion: `kubernetes:<user>`, `admin`, `email:<address>`, `controller:<name>` (auto-promotion). */
export const CREATE_ACTOR_ANNOTATION = 'kargo.akuity.io/create-actor';

/** One step as the Promotion ran it: `alias` is `as`, else `step-<i>` (1-based), `<task>::<step>` for inflated tasks. */
export const stepExecutionSchema = z.looseObject({
  alias: opt(ident(512)),
  status: opt(ident(32)),
  message: opt(longText),
  startedAt: opt(ident(64)),
  finishedAt: opt(ident(64)),
  errorCount: opt(integer),
});

/** `PromotionStatus`, as a Promotion holds it and a Stage's lastPromotion repeats it. */
export const promotionStatusSchema = z.looseObject({
  phase: opt(ident(32)),
  message: opt(longText),
  startedAt: opt(ident(64)),
  finishedAt: opt(ident(64)),
  currentStep: opt(integer),
  freight: opt(freightReferenceSchema),
  stepExecutionMetadata: opt(z.array(stepExecutionSchema).max(256)),
});

export const promotionSchema = ofType(
  { kind: 'Promotion', apiVersions: KARGO },
  z.looseObject({
    metadata: clusterObjectMetaSchema,
    /** `target` (Kargo main): the Target a PromotionRequest's child Promotion promotes to (only such a child may name one). */
    spec: z.looseObject({ stage: longId, freight: opt(longId), target: opt(longId), steps: opt(z.array(z.looseObject({ uses: opt(ident(256)), as: opt(ident(512)) })).max(256)) }),
    status: opt(promotionStatusSchema),
  }),
);
export type Promotion = z.infer<typeof promotionSchema>;
export type PromotionStatus = z.infer<typeof promotionStatusSchema>;
