/**
 * Where a fact goes, as routes (a pipeline, maybe a stage, a release id): pure, so the worker,
 * the tests' harness and the reducer bench resolve facts the same way.
 */
import type { ConfigFile } from '../../config/file.js';
import type { Fact } from '../../facts/fact.js';
import { targetKey } from '../../facts/fact.js';
import type { ResolvedRoute, RoutedFact } from '../../routing/route-types.js';
import { routeFact } from '../../routing/route.js';
import { routeApplicationSet } from '../../routing/route-appset.js';
import { placeChildRoutes } from '../reduce/appset-known.js';
import type { KnownAppSets } from '../reduce/context.js';
import { pipelineNamed as namedIn } from '../../routing/catalog.js';
import { placedRoutes, resolveKargoRoutes, type KargoRouteHints } from '../../routing/kargo-route-hints.js';

/**
 * Where a fact goes. Pure: `managed` are the stages whose Rollouts an Application fact's
 * Application manages, `appSetChildren` per pipeline the releases an ApplicationSet fact's
 * children run (the worker reads both from the target index; tests keep them in maps).
 */
export function resolveRoutes(
  config: ConfigFile,
  fact: Fact,
  managed: readonly { pipeline: string; stage: string; releaseId: string }[] = [],
  appSetChildren: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(),
  kargo: KargoRouteHints = {},
  appSets: ReadonlyMap<string, KnownAppSets> = new Map(),
): ResolvedRoute[] {
  const pipelineNamed = (name: string) => namedIn(config, name);
  switch (fact.kind) {
    case 'rollout':
      return placedRoutes(routeFact(config, fact));
    case 'kargo-stage':
    case 'kargo-promotion':
    case 'kargo-freight':
      return resolveKargoRoutes(routeFact(config, fact), kargo).routes;
    case 'application': {
      const direct: ResolvedRoute[] = placedRoutes(routeFact(config, fact));
      for (const m of managed) {
        const pipeline = pipelineNamed(m.pipeline);
        const stage = pipeline?.stages.find((s) => s.name === m.stage);
        if (pipeline && stage?.rollouts && stage.cluster === fact.target.cluster) direct.push({ pipeline, stage, releaseId: m.releaseId });
      }
      return placeChildRoutes(direct, fact, appSets);
    }
    case 'application-set':
      return routeApplicationSet(config, fact, appSetChildren);
    case 'release':
    case 'watchdog':
    case 'superseded':
    case 'rejection': {
      const pipeline = pipelineNamed(fact.pipeline);
      return pipeline ? [{ pipeline, releaseId: fact.releaseId }] : [];
    }
  }
}

/**
 * The target a fact reports on, when it is one of the stage's targets (an Application fact on a
 * Rollout stage only tells about the sync of targets that are Rollouts).
 */
export function ownedTarget({ fact, route }: RoutedFact): string | undefined {
  if ((fact.kind === 'kargo-stage' || fact.kind === 'kargo-promotion') && route.stage) return targetKey(fact.target);
  return (fact.kind === 'rollout' || fact.kind === 'application') && route.stage && (fact.kind === 'rollout' || !route.stage.rollouts) ? targetKey(fact.target) : undefined;
}
