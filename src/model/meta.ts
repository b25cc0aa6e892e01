/**
 * The pieces every Kubernetes object Glidepath reads shares: bounded text, integers that may
 * arrive as strings, label maps, object metadata. A cluster is a sender we do not control, so
 * everything is bounded; unknown fields pass through (looseObject) and only what Glidepath
 * decides on is typed. Nulls are tolerated, because Go templates render a missing field as null.
 */
import { z } from 'zod';
import { generation, isDns1123Label, isDns1123Subdomain, labelProblem, NAME_MESSAGE, NAMESPACE_MESSAGE } from './kube-names.js';

const MAX_MAP_ENTRIES = 256;

/**
 * An integer that the API sends as a number and Go templates (notification bodies) sometimes
 * render as a string (`"12"`): both are accepted, the result is a number.
 */
export const integer = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number)]);

export const text = (max: number) => z.string().max(max, `longer than ${max} characters`);

/** A Kubernetes object name or namespace, as far as Glidepath needs to trust it. */
export const objectName = z.string().min(1, 'must not be empty').max(253, 'longer than 253 characters');

/** Names and namespaces as the API server accepts them: `/` or control characters would make target keys ambiguous. */
export const kubeName = objectName.refine(isDns1123Subdomain, NAME_MESSAGE);
export const kubeNamespace = objectName.refine(isDns1123Label, NAMESPACE_MESSAGE);

/** Templates render a missing field as null (`toJson` of nil). */
export const absent = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

/** Label and annotation maps: string values only (anything else is never valid in Kubernetes); a missing map is `{}`. */
export const stringMap = z
  .record(z.string().max(317), text(262_144))
  .nullish()
  .transform((m) => m ?? {})
  .refine((m) => Object.keys(m).length <= MAX_MAP_ENTRIES, `more than ${MAX_MAP_ENTRIES} entries`);

/** Labels as the API server accepts them (keys and values are what selectors match). */
export const labelMap = stringMap.superRefine((m, ctx) => {
  const problem = labelProblem(m);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const ownerReferenceSchema = z.looseObject({
  apiVersion: text(253).optional(),
  kind: text(253),
  name: kubeName,
  uid: text(128).optional(),
  controller: z.boolean().nullish(),
});

/** Older controllers and some templates render resourceVersion as a number. */
export const resourceVersion = z.union([text(64).min(1, 'must not be empty'), z.number().transform(String)]);

/** `conditions[]` as most controllers write them. */
export const conditionSchema = z.looseObject({
  type: text(128),
  status: text(32).nullish(),
  reason: text(256).nullish(),
  message: text(16_384).nullish(),
  lastTransitionTime: text(64).nullish(),
});

/**
 * Metadata as a notification body may carry it: name and namespace always, the rest when the
 * template includes it. Objects read from a cluster always carry a resourceVersion; see
 * `clusterObjectMeta`.
 */
export const objectMetaSchema = z.looseObject({
  namespace: kubeNamespace,
  name: kubeName,
  uid: text(128).nullish().transform(absent),
  resourceVersion: resourceVersion.nullish().transform(absent),
  generation: generation.nullish().transform(absent),
  creationTimestamp: text(64).nullish().transform(absent),
  labels: labelMap,
  annotations: stringMap,
  ownerReferences: z.array(ownerReferenceSchema).max(64).nullish(),
});

/** Metadata of an object Glidepath writes back with optimistic concurrency: the resourceVersion is required. */
export const clusterObjectMetaSchema = objectMetaSchema.extend({ resourceVersion });

/** Optional and nullable, read as `undefined` when null: for fields no template renders as null on purpose. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

/** Free text from a cluster (messages, reasons, revisions), bounded. */
export const longText = text(16_384);
