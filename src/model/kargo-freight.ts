/** A Kargo Freight as Glidepath reads it from a cluster: where it came from and which Stages hold, verified or approved it. */
import { z } from 'zod';
import { clusterObjectMetaSchema, longText, opt } from './meta.js';

/** A Freight's origin (its Warehouse), also how a Stage names the Freight it requests. */
export const freightOriginSchema = z.looseObject({ kind: longText, name: longText });

export const freightSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  alias: opt(longText),
  origin: opt(freightOriginSchema),
  status: opt(
    z.looseObject({
      currentlyIn: opt(z.record(z.string(), z.looseObject({ since: opt(longText) }))),
      verifiedIn: opt(z.record(z.string(), z.looseObject({ verifiedAt: opt(longText), longestSoak: opt(longText) }))),
      approvedFor: opt(z.record(z.string(), z.looseObject({ approvedAt: opt(longText) }))),
    }),
  ),
});
export type Freight = z.infer<typeof freightSchema>;
