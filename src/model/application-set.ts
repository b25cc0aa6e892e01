/**
 * An Argo CD ApplicationSet as Glidepath reads it from a cluster: its RollingSync strategy and
 * the per-Application status the controller keeps (which step each child is in).
 */
import { z } from 'zod';
import { ARGOPROJ, clusterObjectMetaSchema, conditionSchema, longId, LONG_TEXT_MAX, ofType, opt } from './meta.js';
import { cutWithEllipsis } from './unicode.js';

/** A Kubernetes `matchExpressions` entry, as RollingSync steps select Applications. */
export const matchExpressionSchema = z.looseObject({ key: longId, operator: longId, values: opt(z.array(longId)) });

const ENTRY_FIELDS = ['application', 'status', 'step', 'message', 'lastTransitionTime', 'targetRevisions'] as const;

/**
 * An entry's fields with null ones left out (read as absent), so that each needs only `.optional()`;
 * a numeric step read as its text and the message cut here (as `longText` cuts it), so that neither
 * needs a union or a transform of its own: both cost a result per entry, thousands per check.
 */
function entryFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entry = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ENTRY_FIELDS) if (entry[key] !== undefined && entry[key] !== null) out[key] = entry[key];
  if (typeof out.step === 'number' && Number.isFinite(out.step)) out.step = String(out.step);
  if (typeof out.message === 'string') out.message = cutWithEllipsis(out.message, LONG_TEXT_MAX);
  return out;
}

/**
 * Which step each child is in: all compared (the child, its status, its step), except the message a
 * person reads. An ApplicationSet holds one per child (thousands, read on every freshness check):
 * null is dropped once per entry rather than by a transform on each field (a third of the allocation).
 */
export const applicationStatusEntrySchema = z.preprocess(
  entryFields,
  z.object({
    application: longId,
    status: longId.optional(),
    step: longId.optional(),
    /** Cut by entryFields (longText's bound). */
    message: z.string().optional(),
    lastTransitionTime: longId.optional(),
    targetRevisions: z.array(longId).max(64).optional(),
  }),
);
export type ApplicationStatusEntry = z.infer<typeof applicationStatusEntrySchema>;

export const applicationSetSchema = ofType(
  { kind: 'ApplicationSet', apiVersions: ARGOPROJ },
  z.looseObject({
    metadata: clusterObjectMetaSchema,
    spec: opt(
      z.looseObject({
        strategy: opt(
          z.looseObject({
            type: opt(longId),
            rollingSync: opt(
              z.looseObject({
                steps: opt(z.array(z.looseObject({ matchExpressions: opt(z.array(matchExpressionSchema)), maxUpdate: opt(z.union([z.number(), longId])) })).max(100)),
              }),
            ),
          }),
        ),
      }),
    ),
    status: opt(z.looseObject({ applicationStatus: opt(z.array(applicationStatusEntrySchema).max(20_000)), conditions: opt(z.array(conditionSchema)) })),
  }),
);
export type ApplicationSet = z.infer<typeof applicationSetSchema>;
