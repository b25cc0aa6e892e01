/**
 * An Argo CD ApplicationSet as Glidepath reads it from a cluster: its RollingSync strategy and
 * the per-Application status the controller keeps (which step each child is in).
 */
import { z } from 'zod';
import { ARGOPROJ, clusterObjectMetaSchema, conditionSchema, longId, longText, ofType, opt } from './meta.js';

/** A Kubernetes `matchExpressions` entry, as RollingSync steps select Applications. */
export const matchExpressionSchema = z.looseObject({ key: longId, operator: longId, values: opt(z.array(longId)) });

/** Which step each child is in: all compared (the child, its status, its step), except the message a person reads. */
export const applicationStatusEntrySchema = z.object({
  application: longId,
  status: opt(longId),
  step: opt(z.union([longId, z.number().transform(String)])),
  message: opt(longText),
  lastTransitionTime: opt(longId),
  targetRevisions: opt(z.array(longId).max(64)),
});
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
