/** A Kargo Promotion as Glidepath reads it from a cluster (after creating one, and while it runs). */
import { z } from 'zod';
import { clusterObjectMetaSchema, longText, opt } from './meta.js';

export const promotionSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  spec: z.looseObject({ stage: longText, freight: opt(longText) }),
  status: opt(z.looseObject({ phase: opt(longText), message: opt(longText), startedAt: opt(longText), finishedAt: opt(longText) })),
});
export type Promotion = z.infer<typeof promotionSchema>;
