/** A Kargo Freight as Glidepath reads it from a cluster: what it carries, where it came from and which Stages hold, verified or approved it. */
import { z } from 'zod';
import { clusterObjectMetaSchema, ident, KARGO, longId, longText, ofType, opt, stringMap } from './meta.js';

/** A Freight's origin (its Warehouse), also how a Stage names the Freight it requests. */
export const freightOriginSchema = z.looseObject({ kind: longId, name: longId });

/** An image a Freight carries; `annotations` are the OCI annotations Kargo recorded (a release id may be one). */
export const freightImageSchema = z.looseObject({
  repoURL: ident(1024),
  tag: opt(ident(256)),
  digest: opt(ident(256)),
  annotations: stringMap,
});

/** A commit is known by its repository and id; only its message is a person's text, and cut. */
export const freightCommitSchema = z.looseObject({
  repoURL: opt(ident(1024)),
  id: opt(ident(256)),
  tag: opt(ident(256)),
  branch: opt(ident(256)),
  message: opt(longText),
});

/** What a Freight carries, as a Freight holds it (top level) and as a FreightReference repeats it (Stage and Promotion status). */
export const freightArtifactsShape = {
  origin: opt(freightOriginSchema),
  images: opt(z.array(freightImageSchema).max(64)),
  commits: opt(z.array(freightCommitSchema).max(64)),
};

/** `FreightReference`: a Freight by name, with what it carries (Stage freightHistory, current/lastPromotion, Promotion status). */
export const freightReferenceSchema = z.looseObject({ name: opt(longId), ...freightArtifactsShape });
export type FreightReference = z.infer<typeof freightReferenceSchema>;

/** The alias is a Freight's other name (a label value in Kargo), and times are parsed: all refused when too long. */
export const freightSchema = ofType(
  { kind: 'Freight', apiVersions: KARGO },
  z.looseObject({
    metadata: clusterObjectMetaSchema,
    alias: opt(longId),
    ...freightArtifactsShape,
    status: opt(
      z.looseObject({
        currentlyIn: opt(z.record(z.string(), z.looseObject({ since: opt(longId) }))),
        verifiedIn: opt(z.record(z.string(), z.looseObject({ verifiedAt: opt(longId), longestSoak: opt(longId) }))),
        approvedFor: opt(z.record(z.string(), z.looseObject({ approvedAt: opt(longId) }))),
      }),
    ),
  }),
);
export type Freight = z.infer<typeof freightSchema>;

/**
 * The one name people read for a Freight, in the thread, `status`, the App Home and command
 * answers alike: its alias (Kargo's name for people) with the short content name, else the
 * short content name. Plain text: escape it for mrkdwn where it is shown.
 */
export function freightDisplayName(freight: { name: string; alias?: string | undefined }): string {
  return freight.alias ? `${freight.alias} (Freight ${freight.name.slice(0, 7)})` : `Freight ${freight.name.slice(0, 12)}`;
}
