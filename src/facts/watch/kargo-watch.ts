/**
 * The watch source's Kargo side: Stages, Promotions and Freight into facts, through their one
 * model schema and the Kargo normaliser. The watch keeps a small view of each watched project
 * (Stage labels, what each Freight carries), because a Promotion names only its Stage and Freight
 * and a PromotionRequest only its Freight: the facts then carry what routing needs.
 */
import type { KargoFreightRef } from '../kargo-fact.js';
import { freightSchema } from '../../model/kargo-freight.js';
import { promotionSchema } from '../../model/kargo-promotion.js';
import { stageSchema } from '../../model/kargo-stage.js';
import type { Fact } from '../fact.js';
import { normaliseKargoFreight, normaliseKargoPromotion, normaliseKargoStage, type KargoLookup } from '../normalise-kargo.js';
import type { WatchScope } from './scopes.js';

/** Bounded: a project keeps ~20 Freight per Warehouse (Kargo's GC); entries past this are dropped oldest first. */
const MAX_ENTRIES = 5_000;

export class KargoDirectory implements KargoLookup {
  private readonly stages = new Map<string, Record<string, string>>();
  private readonly freights = new Map<string, KargoFreightRef>();

  private static put<T>(map: Map<string, T>, key: string, value: T): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
  }

  noteStage(namespace: string, name: string, labels: Record<string, string>): void {
    KargoDirectory.put(this.stages, `${namespace}/${name}`, labels);
  }

  noteFreight(namespace: string, freight: KargoFreightRef): void {
    KargoDirectory.put(this.freights, `${namespace}/${freight.name}`, freight);
  }

  forget(kind: 'Stage' | 'Freight', namespace: string, name: string): void {
    (kind === 'Stage' ? this.stages : this.freights).delete(`${namespace}/${name}`);
  }

  freight(namespace: string, name: string): KargoFreightRef | undefined {
    return this.freights.get(`${namespace}/${name}`);
  }

  stageLabels(namespace: string, name: string): Record<string, string> | undefined {
    return this.stages.get(`${namespace}/${name}`);
  }
}

export const isKargoScope = (scope: WatchScope): boolean => scope.resource.group === 'kargo.akuity.io';

/** Why an object is not a valid fact: the first zod issue, and where in the object it is (for the log). */
export interface RejectedObject {
  rejected: string;
  path: string;
}

export const invalid = (issues: readonly { message: string; path: readonly PropertyKey[] }[]): RejectedObject => ({ rejected: issues[0]?.message ?? 'invalid', path: (issues[0]?.path ?? []).map(String).join('.') });

/**
 * The fact a Kargo object of a scope becomes (`removed`: it left the scope), or the reason it
 * cannot be one. Stages and Freight seen update the directory first.
 */
export function kargoFactFromObject(scope: WatchScope, cluster: string, object: unknown, event: string, receivedAt: number, directory: KargoDirectory, removed = false): Fact | RejectedObject {
  switch (scope.resource.kind) {
    case 'Stage': {
      const parsed = stageSchema.safeParse(object);
      if (!parsed.success) return invalid(parsed.error.issues);
      const { namespace, name, labels } = parsed.data.metadata;
      if (removed) directory.forget('Stage', namespace, name);
      else directory.noteStage(namespace, name, labels);
      const fact = normaliseKargoStage(parsed.data, cluster, receivedAt, event, directory);
      return removed ? { ...fact, removed: { from: scope.labelSelector ?? '' } } : fact;
    }
    case 'Promotion': {
      const parsed = promotionSchema.safeParse(object);
      if (!parsed.success) return invalid(parsed.error.issues);
      return normaliseKargoPromotion(parsed.data, cluster, receivedAt, event, directory);
    }
    default: {
      const parsed = freightSchema.safeParse(object);
      if (!parsed.success) return invalid(parsed.error.issues);
      const fact = normaliseKargoFreight(parsed.data, cluster, receivedAt, event);
      if (removed) directory.forget('Freight', fact.namespace, fact.freight.name);
      else directory.noteFreight(fact.namespace, fact.freight);
      return fact;
    }
  }
}
