/**
 * An Argo CD Application as Glidepath reads it: from an Argo CD notification body (the facts
 * ingest wraps this schema in its envelope) and from a cluster (kube reads). Field shapes follow
 * the Application CRD; only the fields Glidepath decides on are typed.
 */
import { z } from 'zod';
import { ARGOPROJ, cutText, ident, integer, longId, objectMetaSchema, objectName, ofType, opt } from './meta.js';

/** `status.operationState.phase` (Argo CD's `OperationPhase`). */
export const syncPhaseSchema = z.enum(['Running', 'Terminating', 'Failed', 'Error', 'Succeeded']);

const syncResource = z.looseObject({
  kind: ident(253).optional(),
  name: ident(253).optional(),
  namespace: ident(253).optional(),
  status: ident(64).optional(),
  hookType: ident(64).optional(),
  hookPhase: ident(64).optional(),
  message: cutText(16_384).optional(),
});

/** Revisions are a release's id when no annotation names one: refused, never cut. */
const revisions = z.array(ident(256)).max(64).nullish();

const syncPolicy = z.looseObject({
  automated: z.looseObject({ prune: z.boolean().nullish() }).nullish(),
  syncOptions: z.array(ident(1024)).max(64).nullish(),
  retry: z.looseObject({}).nullish(),
});

/** The full schema and its projection are for the same object type. */
const APPLICATION_TYPE = { kind: 'Application', apiVersions: ARGOPROJ };

export const applicationSchema = ofType(
  APPLICATION_TYPE,
  z.looseObject({
    metadata: objectMetaSchema,
    spec: z
      .looseObject({
        project: ident(253).nullish(),
        destination: z.looseObject({ server: ident(1024).optional(), name: ident(253).optional(), namespace: ident(253).optional() }).nullish(),
        syncPolicy: syncPolicy.nullish(),
      })
      .nullish(),
    /** Present while Argo CD is asked to sync (by a person, or by Glidepath's RollingSync step). */
    operation: z.looseObject({}).nullish(),
    status: z
      .looseObject({
        sync: z.looseObject({ status: ident(64).optional(), revision: ident(256).optional(), revisions }).nullish(),
        health: z.looseObject({ status: ident(64).optional(), message: cutText(16_384).optional() }).nullish(),
        reconciledAt: ident(64).nullish(),
        /** Argo CD's summary of the live resources: the images they run (what people know a release by). */
        summary: z.looseObject({ images: z.array(ident(1024)).max(64).nullish() }).nullish(),
        operationState: z
          .looseObject({
            phase: syncPhaseSchema,
            message: cutText(16_384).optional(),
            startedAt: ident(64).optional(),
            finishedAt: ident(64).nullish(),
            retryCount: integer.nullish(),
            operation: z
              .looseObject({
                /** Who asked for the sync, shown in the thread and compared with nothing: cut. */
                initiatedBy: z.looseObject({ username: cutText(253).optional(), automated: z.boolean().nullish() }).nullish(),
                /** How often Argo CD retries a failed attempt (`retryCount` counts them). */
                retry: z.looseObject({ limit: integer.nullish() }).nullish(),
              })
              .nullish(),
            syncResult: z
              .looseObject({
                revision: ident(256).optional(),
                revisions,
                resources: z.array(syncResource).max(5000).nullish(),
              })
              .nullish(),
          })
          .nullish(),
      })
      .nullish(),
  }),
);
export type Application = z.infer<typeof applicationSchema>;

/**
 * The same Application reduced to what freshness and RollingSync decisions read, with every other
 * field dropped (`z.object`, not `looseObject`): parsing thousands of children is the cost of a
 * freshness check, and copying each Application's unknown fields costs four times more than
 * checking these (bench/freshness.ts). Read from a cluster, so the resourceVersion is required.
 * Every string here is compared, none shown: each is refused past its bound, never cut.
 */
export const applicationCoreSchema = ofType(
  APPLICATION_TYPE,
  z.object({
    metadata: z.object({
      name: objectName,
      namespace: objectName,
      uid: opt(longId),
      // Plain checks here, not meta.ts's bounded maps and number-or-string versions: this is the hot path.
      resourceVersion: z.string().min(1).max(64),
      labels: opt(z.record(z.string(), z.string())),
      annotations: opt(z.record(z.string(), z.string())),
      ownerReferences: opt(z.array(z.object({ kind: longId, name: longId, uid: opt(longId), controller: opt(z.boolean()) })).max(64)),
    }),
    spec: opt(z.object({ syncPolicy: opt(z.object({ automated: opt(z.object({ prune: opt(z.boolean()) })), syncOptions: opt(z.array(longId)), retry: opt(z.looseObject({})) })) })),
    operation: opt(z.looseObject({})),
    status: opt(
      z.object({
        reconciledAt: opt(longId),
        sync: opt(z.object({ status: opt(longId), revision: opt(longId), revisions: opt(z.array(longId).max(64)) })),
        health: opt(z.object({ status: opt(longId) })),
        operationState: opt(z.object({ phase: opt(longId) })),
      }),
    ),
  }),
);
export type ApplicationCore = z.infer<typeof applicationCoreSchema>;
