/** A Kargo Freight as Glidepath reads it from a cluster: what it carries, where it came from and which Stages hold, verified or approved it. */
import { z } from 'zod';
import { clusterObjectMetaSchema, longText, opt, stringMap, text } from './meta.js';

/** A Freight's origin (its Warehouse), also how a Stage names the Freight it requests. */
export const freightOriginSchema = z.looseObject({ kind: longText, name: longText });

/** An image a Freight carries; `annotations` are the OCI annotations Kargo recorded (a release id may be one). */
export const freightImageSchema = z.looseObject({
  repoURL: text(1024),
  tag: opt(text(256)),
  digest: opt(text(256)),
  annotations: stringMap,
});

export const freightCommitSchema = z.looseObject({
  repoURL: opt(text(1024)),
  id: opt(text(256)),
  tag: opt(text(256)),
  branch: opt(text(256)),
  message: opt(longText),
});

/** What a Freight carries, as a Freight holds it (top level) and as a FreightReference repeats it (Stage and Promotion status). */
export const freightArtifactsShape = {
  origin: opt(freightOriginSchema),
  images: opt(z.array(freightImageSchema).max(64)),
  commits: opt(z.array(freightCommitSchema).max(64)),
};

/** `FreightReference`: a Freight by name, with what it carries (Stage freightHistory, current/lastPromotion, Promotion status). */
export const freightReferenceSchema = z.looseObject({ name: opt(longText), ...freightArtifactsShape });
export type FreightReference = z.infer<typeof freightReferenceSchema>;

export const freightSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  alias: opt(longText),
  ...freightArtifactsShape,
  status: opt(
    z.looseObject({
      currentlyIn: opt(z.record(z.string(), z.looseObject({ since: opt(longText) }))),
      verifiedIn: opt(z.record(z.string(), z.looseObject({ verifiedAt: opt(longText), longestSoak: opt(longText) }))),
      approvedFor: opt(z.record(z.string(), z.looseObject({ approvedAt: opt(longText) }))),
    }),
  ),
});
export type Freight = z.infer<typeof freightSchema>;
