/**
 * Kargo facts for the pure tests, made as the watch makes them: a Stage object as Kargo writes it
 * (schema-parsed, then normalised), a Freight, and a removal (the watch's DELETED, or missing from
 * a relist: the last object seen, marked as having left the selector `from`).
 */
import type { ConfigFile } from '../../src/config/file.js';
import type { KargoFreightFact, KargoStageFact } from '../../src/facts/kargo-fact.js';
import { normaliseKargoFreight, normaliseKargoStage } from '../../src/facts/normalise-kargo.js';
import { freightSchema } from '../../src/model/kargo-freight.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { testConfig } from './pipeline.js';

export const KARGO_PROJECT = 'kargo-checkout';
export const KARGO_REPO = 'r.example/shop/checkout';

/**
 * The test config with a pipeline `shop` (channel C0123SHOP, release ids from hangar.io/release-id)
 * whose stages follow Kargo Stages of KARGO_PROJECT on cluster prod: each stage name with its
 * Stage selection as YAML flow text, e.g. `{ dev: 'stage: dev', prod: 'selector: "tier=prod"' }`.
 */
export function kargoShopConfig(stages: Record<string, string>): ConfigFile {
  const lines = Object.entries(stages).map(([name, selection]) => `      - { name: ${name}, cluster: prod, kargo: { project: ${KARGO_PROJECT}, ${selection} } }`);
  return testConfig(`  - name: shop
    channel: C0123SHOP
    releaseIdAnnotation: hangar.io/release-id
    stages:
${lines.join('\n')}
`);
}

export const freightName = (n: number): string => `${n}`.padStart(40, 'f');
export const promotionName = (stage: string, n: number): string => `${stage}.01j${String(n).padStart(23, '0')}.${freightName(n).slice(0, 7)}`;

/** Freight `n`: `checkout:<n>.0.0`, with a release id annotation unless `releaseId` is null. */
export function freightRef(n: number, releaseId: string | null = `rel-${n}`) {
  return {
    name: freightName(n),
    origin: { kind: 'Warehouse', name: 'checkout' },
    images: [{ repoURL: KARGO_REPO, tag: `${n}.0.0`, annotations: releaseId ? { 'hangar.io/release-id': releaseId } : {} }],
  };
}

export interface StageShape {
  rv: number;
  uid?: string;
  labels?: Record<string, string>;
  /** The Freight of its Promotion (none: a Stage that was never promoted). */
  freight?: number;
  releaseId?: string | null;
  promotion?: 'running' | 'succeeded';
  health?: 'Healthy' | 'Progressing' | 'Unhealthy' | 'Unknown' | 'NotApplicable';
}

export function kargoStageObject(name: string, s: StageShape): unknown {
  const metadata = { namespace: KARGO_PROJECT, name, uid: s.uid ?? `uid-${name}`, resourceVersion: String(s.rv), generation: 1, labels: s.labels ?? {} };
  if (s.freight === undefined) return { metadata, spec: {}, status: {} };
  const ref = freightRef(s.freight, s.releaseId);
  const promo = { name: promotionName(name, s.freight), freight: ref };
  const status =
    s.promotion === 'running'
      ? { currentPromotion: promo, health: { status: s.health ?? 'Unknown' } }
      : {
          lastPromotion: { ...promo, status: { phase: 'Succeeded', finishedAt: '2026-08-20T09:00:00Z' }, finishedAt: '2026-08-20T09:00:00Z' },
          freightHistory: [{ id: ref.name, items: { 'Warehouse/checkout': ref } }],
          health: { status: s.health ?? 'Healthy' },
        };
  return { metadata, spec: {}, status };
}

export function kargoStageFact(name: string, s: StageShape, at: number, cluster = 'prod'): KargoStageFact {
  return normaliseKargoStage(stageSchema.parse(kargoStageObject(name, s)), cluster, at, 'watch');
}

/** The Stage left the watch of selector `from` ('' for a Stage selected by name). */
export function kargoStageRemoval(name: string, s: StageShape, at: number, from = ''): KargoStageFact {
  return { ...kargoStageFact(name, s, at), event: 'watch-deleted', removed: { from } };
}

export function kargoFreightFact(n: number, rv: number, at: number, releaseId: string | null = `rel-${n}`, alias = `alias-${n}`): KargoFreightFact {
  return normaliseKargoFreight(freightSchema.parse({ metadata: { namespace: KARGO_PROJECT, name: freightName(n), resourceVersion: String(rv) }, alias, ...freightRef(n, releaseId) }), 'prod', at, 'watch');
}
