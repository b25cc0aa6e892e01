/**
 * An Argo CD Application as Glidepath reads it: from an Argo CD notification body (the facts
 * ingest wraps this schema in its envelope) and from a cluster (kube reads). Field shapes follow
 * the Application CRD; only the fields Glidepath decides on are typed.
 */
import { z } from 'zod';
import { ARGOPROJ, cutText, ident, integer, longId, objectMetaSchema, objectName, ofType } from './meta.js';
import { projectionOf } from './projection.js';

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

/**
 * An Application source as the spec and `status.sync.comparedTo` carry it: only compared (the
 * desired state Argo CD last compared against, #29410), so every field is kept as it came.
 */
const source = z.looseObject({ repoURL: ident(2048).optional(), path: ident(2048).optional(), chart: ident(253).optional(), targetRevision: ident(256).optional(), ref: ident(253).optional() });
const destination = z.looseObject({ server: ident(1024).optional(), name: ident(253).optional(), namespace: ident(253).optional() });

/** The full schema and its projection are for the same object type. */
const APPLICATION_TYPE = { kind: 'Application', apiVersions: ARGOPROJ };

export const applicationSchema = ofType(
  APPLICATION_TYPE,
  z.looseObject({
    metadata: objectMetaSchema,
    spec: z
      .looseObject({
        project: ident(253).nullish(),
        destination: destination.nullish(),
        source: source.nullish(),
        sources: z.array(source).max(64).nullish(),
        syncPolicy: syncPolicy.nullish(),
      })
      .nullish(),
    /** Present while Argo CD is asked to sync (by a person, or by Glidepath's RollingSync step). */
    operation: z.looseObject({}).nullish(),
    status: z
      .looseObject({
        sync: z
          .looseObject({
            status: ident(64).optional(),
            revision: ident(256).optional(),
            revisions,
            comparedTo: z.looseObject({ source: source.nullish(), sources: z.array(source).max(64).nullish(), destination: destination.nullish() }).nullish(),
          })
          .nullish(),
        health: z.looseObject({ status: ident(64).optional(), message: cutText(16_384).optional(), lastTransitionTime: ident(64).nullish() }).nullish(),
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

/** JSON with object keys sorted: two sources are the same desired state whatever order their fields came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== null && v !== '');
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Whether the sync and health an Application reports are about its current desired state
 * (argo-cd#29410): `status.sync.comparedTo` (what Argo CD last compared against) holds the same
 * source(s) and destination as the spec. 'stale' when they differ: the spec changed (an
 * ApplicationSet template, another targetRevision) and Argo CD has not compared it yet, so its
 * Synced/Healthy speaks of the previous desired state. Undefined when the body carries no
 * `comparedTo` (a notification template that leaves it out): nothing to judge by.
 */
export function comparisonOf(app: Pick<Application, 'spec' | 'status'>): 'fresh' | 'stale' | undefined {
  const compared = app.status?.sync?.comparedTo;
  if (!compared) return undefined;
  const desiredSources = app.spec?.sources?.length ? app.spec.sources : app.spec?.source ? [app.spec.source] : [];
  const comparedSources = compared.sources?.length ? compared.sources : compared.source ? [compared.source] : [];
  const same = canonical(desiredSources) === canonical(comparedSources) && canonical(app.spec?.destination ?? {}) === canonical(compared.destination ?? {});
  return same ? 'fresh' : 'stale';
}

/**
 * The same Application reduced to what freshness and RollingSync decisions read, with every other
 * field dropped (`z.object`, not `looseObject`): parsing thousands of children is the cost of a
 * freshness check, and copying each Application's unknown fields costs four times more than
 * checking these (bench/freshness.ts). Its projection (projection.ts) reads those fields first, with
 * null read as absent, so each field needs plain `.optional()` (a null-to-undefined transform on every
 * field made parsing allocate 11 KB per Application, more garbage collection than the LIST itself).
 * Read from a cluster, so the resourceVersion is required.
 * Every string here is compared, none shown: each is refused past its bound, never cut.
 */
const applicationCoreObject = z.object({
  metadata: z.object({
    name: objectName,
    namespace: objectName,
    uid: longId.optional(),
    // Plain checks here, not meta.ts's bounded maps and number-or-string versions: this is the hot path.
    resourceVersion: z.string().min(1).max(64),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    ownerReferences: z.array(z.object({ kind: longId, name: longId, uid: longId.optional(), controller: z.boolean().optional() })).max(64).optional(),
  }),
  spec: z
    .object({
      syncPolicy: z.object({ automated: z.object({ prune: z.boolean().optional() }).optional(), syncOptions: z.array(longId).optional(), retry: z.looseObject({}).optional() }).optional(),
      // What an AppProject's syncWindows match (the freeze gate), so an action reads the children once.
      project: longId.optional(),
      destination: z.object({ server: longId.optional(), name: longId.optional(), namespace: longId.optional() }).optional(),
    })
    .optional(),
  operation: z.looseObject({}).optional(),
  status: z
    .object({
      reconciledAt: longId.optional(),
      sync: z.object({ status: longId.optional(), revision: longId.optional(), revisions: z.array(longId).max(64).optional() }).optional(),
      health: z.object({ status: longId.optional() }).optional(),
      operationState: z.object({ phase: longId.optional() }).optional(),
    })
    .optional(),
});
export const applicationCoreSchema = ofType(APPLICATION_TYPE, applicationCoreObject, projectionOf(applicationCoreObject));
export type ApplicationCore = z.infer<typeof applicationCoreSchema>;
