/** Typed reads: one GET or paginated LIST, parsed at the boundary. */
import type { KubeApi, ListOptions } from './api.js';
import { ANALYSIS_RUNS, APPLICATIONS, APPLICATION_SETS, FREIGHT, ROLLOUTS, STAGES, type ResourceRef } from './resources.js';
import { applicationCoreSchema, applicationSchema, type Application, type ApplicationCore } from '../model/application.js';
import { applicationSetSchema, type ApplicationSet } from '../model/application-set.js';
import { freightSchema, type Freight } from '../model/kargo-freight.js';
import { stageSchema, type Stage } from '../model/kargo-stage.js';
import { rolloutSchema, type Rollout } from '../model/rollout.js';
import { analysisRunSchema, type AnalysisRun } from '../model/analysis-run.js';
import { parseItems, parseObject } from './parse-object.js';
import type { z } from 'zod';

export interface TypedList<T> {
  items: T[];
  /** Snapshot version of the list, where a watch resumes. */
  resourceVersion: string;
  /** Items that did not parse (left out, counted so that callers can say so). */
  rejected: number;
}

/** One object by name, parsed with its schema (a shape Glidepath cannot trust is a typed error). */
export async function getTyped<T extends z.ZodType>(api: KubeApi, res: ResourceRef, schema: T, namespace: string, name: string): Promise<z.infer<T>> {
  const raw = await api.get(res, namespace, name);
  return parseObject(schema, raw, { cluster: api.cluster, verb: 'get', resource: res.plural, namespace, name });
}

/**
 * Each page is parsed as it arrives and its raw objects let go: only the parsed items outlive the
 * page. Gathering every raw page first kept thousands of whole objects alive across the LIST's
 * round trips, and the garbage collector copying them cost a freshness check of 2,000 children
 * more than parsing them did (bench/freshness.ts).
 */
async function listTyped<T extends z.ZodType>(api: KubeApi, res: ResourceRef, schema: T, namespace: string, options?: ListOptions): Promise<TypedList<z.infer<T>>> {
  const items: z.infer<T>[] = [];
  let rejected = 0;
  let resourceVersion = '';
  for await (const page of api.listPages(res, namespace, options)) {
    const parsed = parseItems(schema, page.items);
    for (const item of parsed.items) items.push(item);
    rejected += parsed.rejected;
    resourceVersion = page.resourceVersion;
  }
  return { items, rejected, resourceVersion };
}

export const getRollout = (api: KubeApi, ns: string, name: string): Promise<Rollout> => getTyped(api, ROLLOUTS, rolloutSchema, ns, name);
export const listApplications = (api: KubeApi, ns: string, options?: ListOptions): Promise<TypedList<Application>> => listTyped(api, APPLICATIONS, applicationSchema, ns, options);
/** Applications with only the fields freshness and RollingSync read (the fast path for thousands). */
export const listApplicationCores = (api: KubeApi, ns: string, options?: ListOptions): Promise<TypedList<ApplicationCore>> => listTyped(api, APPLICATIONS, applicationCoreSchema, ns, options);
export const getApplicationSet = (api: KubeApi, ns: string, name: string): Promise<ApplicationSet> => getTyped(api, APPLICATION_SETS, applicationSetSchema, ns, name);
export const getStage = (api: KubeApi, ns: string, name: string): Promise<Stage> => getTyped(api, STAGES, stageSchema, ns, name);
export const listStages = (api: KubeApi, ns: string, options?: ListOptions): Promise<TypedList<Stage>> => listTyped(api, STAGES, stageSchema, ns, options);
export const getFreight = (api: KubeApi, ns: string, name: string): Promise<Freight> => getTyped(api, FREIGHT, freightSchema, ns, name);
export const listFreight = (api: KubeApi, ns: string, options?: ListOptions): Promise<TypedList<Freight>> => listTyped(api, FREIGHT, freightSchema, ns, options);
export const getAnalysisRun = (api: KubeApi, ns: string, name: string): Promise<AnalysisRun> => getTyped(api, ANALYSIS_RUNS, analysisRunSchema, ns, name);
