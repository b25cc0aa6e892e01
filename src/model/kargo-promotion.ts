/** A Kargo Promotion as Glidepath reads it from a cluster (after creating one, while it runs, and on the watch). */
import { z } from 'zod';
import { freightReferenceSchema } from './kargo-freight.js';
import { clusterObjectMetaSchema, integer, longText, opt, text } from './meta.js';

/** Who asked for a Promotion: `kubernetes:<user>`, `admin`, `email:<address>`, `controller:<name>` (auto-promotion). */
export const CREATE_ACTOR_ANNOTATION = 'kargo.akuity.io/create-actor';

/** One step as the Promotion ran it: `alias` is `as`, else `step-<i>` (1-based), `<task>::<step>` for inflated tasks. */
export const stepExecutionSchema = z.looseObject({
  alias: opt(text(512)),
  status: opt(text(32)),
  message: opt(longText),
  startedAt: opt(text(64)),
  finishedAt: opt(text(64)),
  errorCount: opt(integer),
});

/** `PromotionStatus`, as a Promotion holds it and a Stage's lastPromotion repeats it. */
export const promotionStatusSchema = z.looseObject({
  phase: opt(text(32)),
  message: opt(longText),
  startedAt: opt(text(64)),
  finishedAt: opt(text(64)),
  currentStep: opt(integer),
  freight: opt(freightReferenceSchema),
  stepExecutionMetadata: opt(z.array(stepExecutionSchema).max(256)),
});

export const promotionSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  /** `target` (Kargo main): the Target a PromotionRequest's child Promotion promotes to (only such a child may name one). */
  spec: z.looseObject({ stage: longText, freight: opt(longText), target: opt(longText), steps: opt(z.array(z.looseObject({ uses: opt(text(256)), as: opt(text(512)) })).max(256)) }),
  status: opt(promotionStatusSchema),
});
export type Promotion = z.infer<typeof promotionSchema>;
export type PromotionStatus = z.infer<typeof promotionStatusSchema>;
