/**
 * The wire formats Glidepath accepts, checked with zod at the boundary. They follow what the
 * real engines send (see deploy/notifications/ for the templates we ship) and tolerate what
 * older controllers and upstream fixtures contain: numbers as strings, null blocks, unknown
 * fields. Everything is bounded, since the sender is a cluster we do not control.
 */
import { z } from 'zod';
import { generation, isDns1123Label, isDns1123Subdomain, isResourceVersion, labelProblem, NAME_MESSAGE, NAMESPACE_MESSAGE, RESOURCE_VERSION_MESSAGE } from '../model/kube-names.js';

const MAX_MAP_ENTRIES = 256;

/** Kubernetes sends numbers; Go templates sometimes render them as strings. */
const integer = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number)]);
const text = (max: number) => z.string().max(max, `longer than ${max} characters`);
const name = z.string().min(1, 'must not be empty').max(253, 'longer than 253 characters');
const objectName = name.refine(isDns1123Subdomain, NAME_MESSAGE);
const namespaceName = name.refine(isDns1123Label, NAMESPACE_MESSAGE);
const resourceVersion = z.union([text(64), z.number().transform(String)]).refine(isResourceVersion, RESOURCE_VERSION_MESSAGE);

/** Label and annotation maps: string values only; non-string values (never valid in Kubernetes) are refused. */
const stringMap = z
  .record(z.string().max(317), text(262_144))
  .nullish()
  .transform((m) => m ?? {})
  .refine((m) => Object.keys(m).length <= MAX_MAP_ENTRIES, `more than ${MAX_MAP_ENTRIES} entries`);

/** Labels as the API server accepts them (keys and values are what selectors match). */
const labelMap = stringMap.superRefine((m, ctx) => {
  const problem = labelProblem(m);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const ownerReference = z.looseObject({
  apiVersion: text(253).optional(),
  kind: text(253),
  name: objectName,
  uid: text(128).optional(),
  controller: z.boolean().nullish(),
});

/** Templates render a missing field as null (`toJson` of nil). */
const absent = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

const metadata = z.looseObject({
  namespace: namespaceName,
  name: objectName,
  uid: text(128).nullish().transform(absent),
  resourceVersion: resourceVersion.nullish().transform(absent),
  generation: generation.nullish().transform(absent),
  labels: labelMap,
  annotations: stringMap,
  ownerReferences: z.array(ownerReference).max(64).nullish(),
});

const container = z.looseObject({ name: text(253).optional(), image: text(1024).optional() });

const canaryStep = z.looseObject({}).nullable();

const rolloutSpec = z
  .looseObject({
    replicas: integer.nullish(),
    paused: z.boolean().nullish(),
    restartAt: text(64).nullish(),
    template: z
      .looseObject({ spec: z.looseObject({ containers: z.array(container).max(64).nullish() }).nullish() })
      .nullish(),
    strategy: z
      .looseObject({
        canary: z.looseObject({ steps: z.array(canaryStep).max(500).nullish() }).nullish(),
        blueGreen: z.looseObject({}).nullish(),
      })
      .nullish(),
  })
  .nullish();

const analysisRunStatus = z.looseObject({ name: text(253).optional(), status: text(64).optional(), message: text(4096).optional() });

const rolloutStatus = z
  .looseObject({
    phase: text(64).optional(),
    message: text(16_384).optional(),
    observedGeneration: z.union([text(128), z.number()]).optional(),
    currentPodHash: text(64).optional(),
    stableRS: text(64).optional(),
    currentStepIndex: integer.nullish(),
    pauseConditions: z.array(z.looseObject({ reason: text(128).optional(), startTime: text(64).optional() })).max(32).nullish(),
    controllerPause: z.boolean().nullish(),
    abort: z.boolean().nullish(),
    abortedAt: text(64).nullish(),
    restartedAt: text(64).nullish(),
    replicas: integer.nullish(),
    updatedReplicas: integer.nullish(),
    readyReplicas: integer.nullish(),
    availableReplicas: integer.nullish(),
    HPAReplicas: integer.nullish(),
    conditions: z
      .array(z.looseObject({ type: text(128), status: text(32).optional(), reason: text(256).optional(), message: text(16_384).optional() }))
      .max(64)
      .nullish(),
    canary: z
      .looseObject({
        weights: z.looseObject({ canary: z.looseObject({ weight: integer.nullish() }).nullish() }).nullish(),
        currentStepAnalysisRunStatus: analysisRunStatus.nullish(),
      })
      .nullish(),
    blueGreen: z.looseObject({}).nullish(),
  })
  .nullish();

/** Unix seconds (our templates) or an RFC 3339 time. */
const sentAt = z
  .union([z.number(), text(64)])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const ms = typeof v === 'number' ? v * 1000 : /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be unix seconds or an RFC 3339 time' });
      return z.NEVER;
    }
    return ms;
  });

const event = text(200).regex(/^[\w.:-]*$/, 'must be a trigger name such as on-glidepath-rollout-paused').default('unknown');

export const rolloutFactBody = z.looseObject({
  event,
  sentAt,
  rollout: z.looseObject({
    metadata: metadata.extend({
      generation,
      resourceVersion,
    }),
    spec: rolloutSpec,
    status: rolloutStatus,
  }),
});
export type RolloutFactBody = z.infer<typeof rolloutFactBody>;

const syncPhase = z.enum(['Running', 'Terminating', 'Failed', 'Error', 'Succeeded']);

const syncResource = z.looseObject({
  kind: text(253).optional(),
  name: text(253).optional(),
  namespace: text(253).optional(),
  status: text(64).optional(),
  hookType: text(64).optional(),
  hookPhase: text(64).optional(),
  message: text(16_384).optional(),
});

export const applicationFactBody = z.looseObject({
  event,
  sentAt,
  application: z.looseObject({
    metadata,
    spec: z
      .looseObject({
        project: text(253).nullish(),
        destination: z.looseObject({ server: text(1024).optional(), name: text(253).optional(), namespace: text(253).optional() }).nullish(),
      })
      .nullish(),
    status: z
      .looseObject({
        sync: z
          .looseObject({ status: text(64).optional(), revision: text(256).optional(), revisions: z.array(text(256)).max(64).nullish() })
          .nullish(),
        health: z.looseObject({ status: text(64).optional(), message: text(16_384).optional() }).nullish(),
        reconciledAt: text(64).nullish(),
        operationState: z
          .looseObject({
            phase: syncPhase,
            message: text(16_384).optional(),
            startedAt: text(64).optional(),
            finishedAt: text(64).nullish(),
            retryCount: integer.nullish(),
            operation: z.looseObject({ initiatedBy: z.looseObject({ username: text(253).optional(), automated: z.boolean().nullish() }).nullish() }).nullish(),
            syncResult: z
              .looseObject({
                revision: text(256).optional(),
                revisions: z.array(text(256)).max(64).nullish(),
                resources: z.array(syncResource).max(5000).nullish(),
              })
              .nullish(),
          })
          .nullish(),
      })
      .nullish(),
  }),
});
export type ApplicationFactBody = z.infer<typeof applicationFactBody>;

export const releaseIdSchema = text(200)
  .min(1, 'must not be empty')
  .regex(/^[\w.@/+:-]+$/, 'may hold letters, digits and . _ - @ / + : only');

export const releaseAnnouncementBody = z
  .object({
    releaseId: releaseIdSchema,
    pipeline: text(63).min(1),
    images: z.array(text(1024).regex(/^[^\s]+$/, 'must be an image reference without spaces')).min(1).max(64),
    commit: text(64).regex(/^[0-9a-f]{7,64}$/i, 'must be a git commit hash').optional(),
    pullRequestUrl: z.url({ protocol: /^https?$/ }).max(2048).optional(),
    author: text(200).optional(),
  })
  .strict();
export type ReleaseAnnouncementBody = z.infer<typeof releaseAnnouncementBody>;
