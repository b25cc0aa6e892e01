/**
 * What Glidepath reads back from a cluster, checked with zod at the boundary. Lenient like the
 * fact schemas: unknown fields pass through, nulls are tolerated, only the fields Glidepath
 * decides on are typed. A cluster is not trusted, so anything decisive is checked here.
 */
import { z } from 'zod';
import { KubeActionError, type KubeCall } from './errors.js';

const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);
const text = z.string().max(16_384);
const stringMap = opt(z.record(z.string(), z.string()));

export const ownerReferenceSchema = z.looseObject({
  apiVersion: opt(text),
  kind: text,
  name: text,
  uid: opt(text),
  controller: opt(z.boolean()),
});

export const objectMetaSchema = z.looseObject({
  name: z.string().min(1).max(253),
  namespace: opt(z.string().max(63)),
  uid: opt(text),
  resourceVersion: z.string().min(1).max(64),
  generation: opt(z.number().int()),
  creationTimestamp: opt(text),
  labels: stringMap,
  annotations: stringMap,
  ownerReferences: opt(z.array(ownerReferenceSchema).max(64)),
});

const condition = z.looseObject({ type: text, status: opt(text), reason: opt(text), message: opt(text), lastTransitionTime: opt(text) });

export const rolloutSchema = z.looseObject({
  metadata: objectMetaSchema.extend({ generation: z.number().int() }),
  spec: opt(z.looseObject({ paused: opt(z.boolean()) })),
  status: opt(
    z.looseObject({
      observedGeneration: opt(z.union([text, z.number()])),
      phase: opt(text),
      currentPodHash: opt(text),
      stableRS: opt(text),
      currentStepIndex: opt(z.number().int()),
      pauseConditions: opt(z.array(z.looseObject({ reason: opt(text), startTime: opt(text) })).max(32)),
      abort: opt(z.boolean()),
    }),
  ),
});
export type Rollout = z.infer<typeof rolloutSchema>;

const revisions = opt(z.array(text).max(64));

const applicationFields = {
  spec: opt(
    z.looseObject({
      syncPolicy: opt(z.looseObject({ automated: opt(z.looseObject({ prune: opt(z.boolean()) })), syncOptions: opt(z.array(text)), retry: opt(z.looseObject({})) })),
    }),
  ),
  operation: opt(z.looseObject({})),
  status: opt(
    z.looseObject({
      reconciledAt: opt(text),
      sync: opt(z.looseObject({ status: opt(text), revision: opt(text), revisions })),
      health: opt(z.looseObject({ status: opt(text), message: opt(text) })),
      operationState: opt(z.looseObject({ phase: opt(text), startedAt: opt(text), finishedAt: opt(text) })),
    }),
  ),
};

export const applicationSchema = z.looseObject({ metadata: objectMetaSchema, ...applicationFields });

/**
 * Only what freshness and RollingSync decisions read, with everything else dropped: parsing
 * thousands of children is the cost of a freshness check, and copying each Application's unknown
 * fields costs four times more than checking these (bench/freshness.ts).
 */
export const applicationCoreSchema = z.object({
  metadata: z.object({
    name: objectMetaSchema.shape.name,
    namespace: objectMetaSchema.shape.namespace,
    uid: objectMetaSchema.shape.uid,
    resourceVersion: objectMetaSchema.shape.resourceVersion,
    labels: stringMap,
    annotations: stringMap,
    ownerReferences: opt(z.array(z.object({ kind: text, name: text, uid: opt(text), controller: opt(z.boolean()) })).max(64)),
  }),
  spec: opt(z.object({ syncPolicy: opt(z.object({ automated: opt(z.object({ prune: opt(z.boolean()) })), syncOptions: opt(z.array(text)), retry: opt(z.looseObject({})) })) })),
  operation: opt(z.looseObject({})),
  status: opt(
    z.object({
      reconciledAt: opt(text),
      sync: opt(z.object({ status: opt(text), revision: opt(text), revisions })),
      health: opt(z.object({ status: opt(text) })),
      operationState: opt(z.object({ phase: opt(text) })),
    }),
  ),
});
export type ApplicationCore = z.infer<typeof applicationCoreSchema>;

export type Application = z.infer<typeof applicationSchema>;

const matchExpression = z.looseObject({ key: text, operator: text, values: opt(z.array(text)) });

export const applicationStatusEntrySchema = z.object({
  application: text,
  status: opt(text),
  step: opt(z.union([text, z.number().transform(String)])),
  message: opt(text),
  lastTransitionTime: opt(text),
  targetRevisions: revisions,
});
export type ApplicationStatusEntry = z.infer<typeof applicationStatusEntrySchema>;

export const applicationSetSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: opt(
    z.looseObject({
      strategy: opt(
        z.looseObject({
          type: opt(text),
          rollingSync: opt(z.looseObject({ steps: opt(z.array(z.looseObject({ matchExpressions: opt(z.array(matchExpression)), maxUpdate: opt(z.union([z.number(), text])) })).max(100)) })),
        }),
      ),
    }),
  ),
  status: opt(z.looseObject({ applicationStatus: opt(z.array(applicationStatusEntrySchema).max(20_000)), conditions: opt(z.array(condition)) })),
});
export type ApplicationSet = z.infer<typeof applicationSetSchema>;

const origin = z.looseObject({ kind: text, name: text });

export const stageSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: opt(
    z.looseObject({
      requestedFreight: opt(
        z.array(
          z.looseObject({
            origin,
            sources: opt(
              z.looseObject({
                direct: opt(z.boolean()),
                stages: opt(z.array(text)),
                requiredSoakTime: opt(text),
                availabilityStrategy: opt(text),
              }),
            ),
          }),
        ),
      ),
      promotionTemplate: opt(z.looseObject({ spec: opt(z.looseObject({ steps: opt(z.array(z.looseObject({}))) })) })),
    }),
  ),
  status: opt(
    z.looseObject({
      conditions: opt(z.array(condition)),
      health: opt(z.looseObject({ status: opt(text) })),
      freightHistory: opt(z.array(z.looseObject({ id: opt(text), items: opt(z.record(z.string(), z.looseObject({ name: opt(text) }))) }))),
      currentPromotion: opt(z.looseObject({ name: opt(text), freight: opt(z.looseObject({ name: opt(text) })) })),
      lastPromotion: opt(z.looseObject({ name: opt(text), freight: opt(z.looseObject({ name: opt(text) })), finishedAt: opt(text), status: opt(z.looseObject({ phase: opt(text), message: opt(text), finishedAt: opt(text) })) })),
    }),
  ),
});
export type Stage = z.infer<typeof stageSchema>;

export const freightSchema = z.looseObject({
  metadata: objectMetaSchema,
  alias: opt(text),
  origin: opt(origin),
  status: opt(
    z.looseObject({
      currentlyIn: opt(z.record(z.string(), z.looseObject({ since: opt(text) }))),
      verifiedIn: opt(z.record(z.string(), z.looseObject({ verifiedAt: opt(text), longestSoak: opt(text) }))),
      approvedFor: opt(z.record(z.string(), z.looseObject({ approvedAt: opt(text) }))),
    }),
  ),
});
export type Freight = z.infer<typeof freightSchema>;

export const promotionSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: z.looseObject({ stage: text, freight: opt(text) }),
  status: opt(z.looseObject({ phase: opt(text), message: opt(text), startedAt: opt(text), finishedAt: opt(text) })),
});
export type Promotion = z.infer<typeof promotionSchema>;

/** Parses one object read from a cluster; a shape Glidepath cannot trust is a typed error. */
export function parseObject<T extends z.ZodType>(schema: T, value: unknown, call: KubeCall): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue ? issue.path.join('.') : '';
  throw new KubeActionError('malformed', `${call.name ?? call.resource} in ${call.cluster}${call.namespace ? `/${call.namespace}` : ''} has a shape Glidepath does not understand (${path || 'object'}: ${issue?.message ?? 'invalid'}); nothing was changed`, call);
}

/** Parses the items of a list; items that do not parse are returned apart, never silently used. */
export function parseItems<T extends z.ZodType>(schema: T, items: unknown[]): { items: z.infer<T>[]; rejected: number } {
  const parsed: z.infer<T>[] = [];
  let rejected = 0;
  for (const item of items) {
    const r = schema.safeParse(item);
    if (r.success) parsed.push(r.data);
    else rejected++;
  }
  return { items: parsed, rejected };
}
