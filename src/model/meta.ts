/**
 * The pieces every Kubernetes object Glidepath reads shares: bounded text, integers that may
 * arrive as strings, label maps, object metadata. A cluster is a sender we do not control, so
 * everything is bounded; unknown fields pass through (looseObject) and only what Glidepath
 * decides on is typed. Nulls are tolerated, because Go templates render a missing field as null.
 *
 * Two kinds of bounded string, chosen per field:
 * - `ident(max)`: names, uids, versions, phases, times, revisions, image references: what
 *   Glidepath keys on or compares. Cut, it would be another value, so an over-long one makes the
 *   object untrustworthy and it is refused (the fact is dropped, and says where).
 * - `cutText(max)`: what a person reads (messages, reasons, annotation values). An over-long
 *   one is cut with `…` and the object still counts: a 40 KB abort message must not hide the abort.
 */
import { z } from 'zod';
import { generation, isDns1123Label, isDns1123Subdomain, labelProblem, NAME_MESSAGE, NAMESPACE_MESSAGE } from './kube-names.js';
import { cutWithEllipsis as cut } from './unicode.js';

const MAX_MAP_ENTRIES = 256;

/**
 * An integer that the API sends as a number and Go templates (notification bodies) sometimes
 * render as a string (`"12"`): both are accepted, the result is a number.
 */
export const integer = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number)]);

/** An identifier or token (see above): refused when longer than `max` UTF-16 units. */
export const ident = (max: number) => z.string().max(max, `longer than ${max} characters`);

/** Free text (see above): cut to at most `max` UTF-16 units, ending in `…`, never half a pair. */
export const cutText = (max: number) => z.string().transform((value) => cut(value, max));

/** A Kubernetes object name or namespace, as far as Glidepath needs to trust it. */
export const objectName = z.string().min(1, 'must not be empty').max(253, 'longer than 253 characters');

/** Names and namespaces as the API server accepts them: `/` or control characters would make target keys ambiguous. */
export const kubeName = objectName.refine(isDns1123Subdomain, NAME_MESSAGE);
export const kubeNamespace = objectName.refine(isDns1123Label, NAMESPACE_MESSAGE);

/** Templates render a missing field as null (`toJson` of nil). */
export const absent = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

/**
 * Label and annotation maps: string values only (anything else is never valid in Kubernetes); a
 * missing map is `{}`. Keys are identifiers (refused when too long); values are cut at 256 KiB
 * (the API server's limit for all annotations together), so a 10 MiB value is never kept whole;
 * labels are then checked as Kubernetes would (`labelMap`), which refuses any value over 63.
 */
export const stringMap = z
  .record(z.string().max(317, 'longer than 317 characters'), cutText(262_144))
  .nullish()
  .transform((m) => m ?? {})
  .refine((m) => Object.keys(m).length <= MAX_MAP_ENTRIES, `more than ${MAX_MAP_ENTRIES} entries`);

/** Labels as the API server accepts them (keys and values are what selectors match). */
export const labelMap = stringMap.superRefine((m, ctx) => {
  const problem = labelProblem(m);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const ownerReferenceSchema = z.looseObject({
  apiVersion: ident(253).optional(),
  kind: ident(253),
  name: kubeName,
  uid: ident(128).optional(),
  controller: z.boolean().nullish(),
});

/** Older controllers and some templates render resourceVersion as a number. */
export const resourceVersion = z.union([ident(64).min(1, 'must not be empty'), z.number().transform(String)]);

/** `conditions[]` as most controllers write them: type and status are compared, reason and message are read. */
export const conditionSchema = z.looseObject({
  type: ident(128),
  status: ident(32).nullish(),
  reason: cutText(256).nullish(),
  message: cutText(16_384).nullish(),
  lastTransitionTime: ident(64).nullish(),
});

/**
 * Metadata as a notification body may carry it: name and namespace always, the rest when the
 * template includes it. Objects read from a cluster always carry a resourceVersion; see
 * `clusterObjectMeta`.
 */
export const objectMetaSchema = z.looseObject({
  namespace: kubeNamespace,
  name: kubeName,
  uid: ident(128).nullish().transform(absent),
  resourceVersion: resourceVersion.nullish().transform(absent),
  generation: generation.nullish().transform(absent),
  creationTimestamp: ident(64).nullish().transform(absent),
  labels: labelMap,
  annotations: stringMap,
  ownerReferences: z.array(ownerReferenceSchema).max(64).nullish(),
});

/** Metadata of an object Glidepath writes back with optimistic concurrency: the resourceVersion is required. */
export const clusterObjectMetaSchema = objectMetaSchema.extend({ resourceVersion });

/** Optional and nullable, read as `undefined` when null: for fields no template renders as null on purpose. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

/** Where `longText` cuts. */
export const LONG_TEXT_MAX = 16_384;

/** Free text from a cluster (messages, conditions, expressions a person reads), cut at 16 KiB. */
export const longText = cutText(LONG_TEXT_MAX);

/** An identifier or token of a size no real one has (application, stage, freight, target names; phases, times): refused past 16 KiB. */
export const longId = ident(16_384);

/**
 * The `apiVersion` and `kind` an object of a schema must carry, from its CRD (each CRD Glidepath
 * reads serves one version, v1alpha1; a CRD serving several would list each here).
 */
export interface ObjectType {
  kind: string;
  apiVersions: readonly string[];
}

/** A value as an issue message may quote it: short, one line, quoted when not a plain word. */
function shown(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value}`;
  const short = cut(value, 64);
  return /^[\w./-]+$/.test(short) ? short : JSON.stringify(short);
}

/** Absent, null or empty: what a Go object with an unset TypeMeta renders as (a template's `{{.kind}}` of a missing key). */
const unsaid = (value: unknown): boolean => value == null || value === '';

/** Why an object is not of `type`, naming the field, or undefined (an absent field is no reason). */
export function typeProblem(type: ObjectType, value: unknown): { field: 'kind' | 'apiVersion'; message: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, apiVersion } = value as { kind?: unknown; apiVersion?: unknown };
  if (!unsaid(kind) && kind !== type.kind) return { field: 'kind', message: `expected ${type.kind}, got ${shown(kind)}` };
  if (!unsaid(apiVersion) && !type.apiVersions.includes(apiVersion as string)) {
    return { field: 'apiVersion', message: `expected ${type.apiVersions.join(' or ')}, got ${shown(apiVersion)}` };
  }
  return undefined;
}

/**
 * `schema`, for objects of one type only. Notification templates send neither field (they build
 * the object field by field), so an absent, null or empty one passes; API servers set both on every
 * custom resource they serve (GET, LIST items, watch events), so a wrong one is another object,
 * a Secret or an Application sent where a Rollout belongs, and it is refused with that one
 * reason (the object's other fields are not judged: they describe something else).
 * `project`, for an object of the type, gives what `schema` reads (see applicationCoreSchema).
 */
export function ofType<S extends z.ZodType>(type: ObjectType, schema: S, project: (value: unknown) => unknown = (value) => value): z.ZodPreprocess<S, unknown> {
  // A preprocess, not z.unknown().superRefine(): measured, the refinement's pipe made parsing an
  // Application allocate 2.5 KB more (bench/freshness.ts parses thousands).
  return z.preprocess((value, ctx) => {
    const problem = typeProblem(type, value);
    if (!problem) return project(value);
    ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
    return value;
  }, schema);
}

export const ARGOPROJ = ['argoproj.io/v1alpha1'] as const;
export const KARGO = ['kargo.akuity.io/v1alpha1'] as const;
