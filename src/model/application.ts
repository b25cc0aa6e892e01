/**
 * An Argo CD Application as Glidepath reads it: from an Argo CD notification body (the facts
 * ingest wraps this schema in its envelope) and from a cluster (kube reads). Field shapes follow
 * the Application CRD; only the fields Glidepath decides on are typed.
 */
import { z } from 'zod';
import { integer, longText, objectMetaSchema, objectName, opt, text } from './meta.js';

/** `status.operationState.phase` (Argo CD's `OperationPhase`). */
export const syncPhaseSchema = z.enum(['Running', 'Terminating', 'Failed', 'Error', 'Succeeded']);

const syncResource = z.looseObject({
  kind: text(253).optional(),
  name: text(253).optional(),
  namespace: text(253).optional(),
  status: text(64).optional(),
  hookType: text(64).optional(),
  hookPhase: text(64).optional(),
  message: text(16_384).optional(),
});

const revisions = z.array(text(256)).max(64).nullish();

const syncPolicy = z.looseObject({
  automated: z.looseObject({ prune: z.boolean().nullish() }).nullish(),
  syncOptions: z.array(text(1024)).max(64).nullish(),
  retry: z.looseObject({}).nullish(),
});

export const applicationSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: z
    .looseObject({
      project: text(253).nullish(),
      destination: z.looseObject({ server: text(1024).optional(), name: text(253).optional(), namespace: text(253).optional() }).nullish(),
      syncPolicy: syncPolicy.nullish(),
    })
    .nullish(),
  /** Present while Argo CD is asked to sync (by a person, or by Glidepath's RollingSync step). */
  operation: z.looseObject({}).nullish(),
  status: z
    .looseObject({
      sync: z.looseObject({ status: text(64).optional(), revision: text(256).optional(), revisions }).nullish(),
      health: z.looseObject({ status: text(64).optional(), message: text(16_384).optional() }).nullish(),
      reconciledAt: text(64).nullish(),
      operationState: z
        .looseObject({
          phase: syncPhaseSchema,
          message: text(16_384).optional(),
          startedAt: text(64).optional(),
          finishedAt: text(64).nullish(),
          retryCount: integer.nullish(),
          operation: z
            .looseObject({
              initiatedBy: z.looseObject({ username: text(253).optional(), automated: z.boolean().nullish() }).nullish(),
              /** How often Argo CD retries a failed attempt (`retryCount` counts them). */
              retry: z.looseObject({ limit: integer.nullish() }).nullish(),
            })
            .nullish(),
          syncResult: z
            .looseObject({
              revision: text(256).optional(),
              revisions,
              resources: z.array(syncResource).max(5000).nullish(),
            })
            .nullish(),
        })
        .nullish(),
    })
    .nullish(),
});
export type Application = z.infer<typeof applicationSchema>;

/**
 * The same Application reduced to what freshness and RollingSync decisions read, with every other
 * field dropped (`z.object`, not `looseObject`): parsing thousands of children is the cost of a
 * freshness check, and copying each Application's unknown fields costs four times more than
 * checking these (bench/freshness.ts). Read from a cluster, so the resourceVersion is required.
 */
export const applicationCoreSchema = z.object({
  metadata: z.object({
    name: objectName,
    namespace: objectName,
    uid: opt(longText),
    // Plain checks here, not meta.ts's bounded maps and number-or-string versions: this is the hot path.
    resourceVersion: z.string().min(1).max(64),
    labels: opt(z.record(z.string(), z.string())),
    annotations: opt(z.record(z.string(), z.string())),
    ownerReferences: opt(z.array(z.object({ kind: longText, name: longText, uid: opt(longText), controller: opt(z.boolean()) })).max(64)),
  }),
  spec: opt(z.object({ syncPolicy: opt(z.object({ automated: opt(z.object({ prune: opt(z.boolean()) })), syncOptions: opt(z.array(longText)), retry: opt(z.looseObject({})) })) })),
  operation: opt(z.looseObject({})),
  status: opt(
    z.object({
      reconciledAt: opt(longText),
      sync: opt(z.object({ status: opt(longText), revision: opt(longText), revisions: opt(z.array(longText).max(64)) })),
      health: opt(z.object({ status: opt(longText) })),
      operationState: opt(z.object({ phase: opt(longText) })),
    }),
  ),
});
export type ApplicationCore = z.infer<typeof applicationCoreSchema>;
