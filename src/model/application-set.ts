/**
 * An Argo CD ApplicationSet as Glidepath reads it from a cluster: its RollingSync strategy and
 * the per-Application status the controller keeps (which step each child is in).
 */
import { z } from 'zod';
import { clusterObjectMetaSchema, conditionSchema, longText, opt } from './meta.js';

/** A Kubernetes `matchExpressions` entry, as RollingSync steps select Applications. */
export const matchExpressionSchema = z.looseObject({ key: longText, operator: longText, values: opt(z.array(longText)) });

export const applicationStatusEntrySchema = z.object({
  application: longText,
  status: opt(longText),
  step: opt(z.union([longText, z.number().transform(String)])),
  message: opt(longText),
  lastTransitionTime: opt(longText),
  targetRevisions: opt(z.array(longText).max(64)),
});
export type ApplicationStatusEntry = z.infer<typeof applicationStatusEntrySchema>;

export const applicationSetSchema = z.looseObject({
  metadata: clusterObjectMetaSchema,
  spec: opt(
    z.looseObject({
      strategy: opt(
        z.looseObject({
          type: opt(longText),
          rollingSync: opt(
            z.looseObject({
              steps: opt(z.array(z.looseObject({ matchExpressions: opt(z.array(matchExpressionSchema)), maxUpdate: opt(z.union([z.number(), longText])) })).max(100)),
            }),
          ),
        }),
      ),
    }),
  ),
  status: opt(z.looseObject({ applicationStatus: opt(z.array(applicationStatusEntrySchema).max(20_000)), conditions: opt(z.array(conditionSchema)) })),
});
export type ApplicationSet = z.infer<typeof applicationSetSchema>;
