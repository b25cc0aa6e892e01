/**
 * Drives the reducer worker's own pure steps (routing, the batch step, the target index updates,
 * the ApplicationSet membership index, superseded facts fed back) with plain maps standing in for Redis, one fact per batch, for
 * exhaustive pure tests. Nothing here re-implements a rule of the worker.
 */
import type { ConfigFile } from '../../src/config/file.js';
import { targetKey, type Fact, type RolloutFact } from '../../src/facts/fact.js';
import { resolveKargoRoutes, type KargoRouteHints } from '../../src/routing/kargo-route-hints.js';
import { unplacedEntry } from '../../src/releases/store/kargo-tombstones.js';
import type { KargoSeen } from '../../src/releases/store/target-index.js';
import { knownByStage, ownedFromEntry, type TargetEntry } from '../../src/releases/store/target-index.js';
import { routeFact } from '../../src/routing/route.js';
import { normaliseRollout } from '../../src/facts/normalise.js';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import type { OwnAction } from '../../src/releases/reduce/own-action-keys.js';
import type { ReduceOutcome } from '../../src/releases/reduce/reduce-kit.js';
import type { Effect, ReleaseRecord } from '../../src/releases/record/record.js';
import { reduceReleaseBatch, targetIndexUpdates } from '../../src/releases/worker/reducer-worker.js';
import { ownedTarget, resolveRoutes } from '../../src/releases/worker/resolve-routes.js';
import { childTargetKeys, pipelinesOfAppSet } from '../../src/routing/route-appset.js';
import { appSetStateOf, compareAppSetStates } from '../../src/releases/reduce/appset-known.js';
import type { KnownAppSets } from '../../src/releases/reduce/context.js';
import type { AppSetState } from '../../src/releases/record/appset-record.js';

export function rolloutFact(body: unknown, receivedAt: number, cluster = 'prod'): RolloutFact {
  return normaliseRollout(rolloutFactBody.parse(body), cluster, receivedAt);
}

export class Harness {
  /** Release records by `pipeline/releaseId`. */
  readonly records = new Map<string, ReleaseRecord>();
  /** The target index: per pipeline, target → the release it runs. */
  readonly targets = new Map<string, Map<string, TargetEntry>>();
  /** Application → `pipeline/stage` → release id. */
  readonly applications = new Map<string, Map<string, string>>();
  readonly effects: { releaseId: string; effect: Effect }[] = [];
  readonly outcomes: ReduceOutcome[] = [];
  /** The ApplicationSet membership index: per pipeline, ApplicationSet key → the latest state heard (AppSetMemberships). */
  readonly appSets = new Map<string, Map<string, AppSetState>>();
  /** Glidepath's own actions per target, as the worker reads them from Redis (undefined: not known). */
  ownActions: Record<string, OwnAction[]> | undefined;
  /**
   * Stands in for the release store's cache (test/releases/record-codec.test.ts): the record the
   * batch step is handed (default: a copy of the last one), and each record saved.
   */
  store: { load(key: string, last: ReleaseRecord | undefined): ReleaseRecord | undefined; save(key: string, record: ReleaseRecord): void } | undefined;

  constructor(readonly config: ConfigFile) {}

  record(releaseId: string, pipeline = 'checkout'): ReleaseRecord | undefined {
    return this.records.get(`${pipeline}/${releaseId}`);
  }

  replies(kind?: string): { releaseId: string; effect: Extract<Effect, { type: 'thread.reply' }> }[] {
    return this.effects.filter(
      (e): e is { releaseId: string; effect: Extract<Effect, { type: 'thread.reply' }> } =>
        e.effect.type === 'thread.reply' && (kind === undefined || e.effect.kind === kind),
    );
  }

  /**
   * As the worker's Kargo lookups: a Stage without Freight goes to the pipeline's newest release
   * (and is known to its stage even when there is none); no announcements here.
   */
  private kargoHints(fact: Fact): KargoRouteHints {
    if (fact.kind !== 'kargo-stage' || (fact.stage.freight && !fact.removed)) return {};
    const inFlight: Record<string, string> = {};
    const routes = routeFact(this.config, fact);
    for (const r of routes) {
      const open = [...this.records.values()].filter((rec) => rec.pipeline === r.pipeline.name).sort((a, b) => b.updatedAt - a.updatedAt)[0];
      if (open) inFlight[r.pipeline.name] = open.releaseId;
    }
    for (const r of resolveKargoRoutes(routes, { inFlight }).unplaced) {
      const key = targetKey(fact.target);
      const index = this.targetsOf(r.pipeline.name);
      const entry = unplacedEntry(fact, r.stage.name, index.get(key)?.kargo);
      if (entry) index.set(key, entry);
    }
    return { inFlight };
  }

  private targetsOf(pipeline: string): Map<string, TargetEntry> {
    let entries = this.targets.get(pipeline);
    if (!entries) this.targets.set(pipeline, (entries = new Map()));
    return entries;
  }

  apply(fact: Fact): ReduceOutcome[] {
    const out: ReduceOutcome[] = [];
    const managed =
      fact.kind === 'application'
        ? [...(this.applications.get(`${fact.target.cluster}/${fact.target.name}`) ?? new Map<string, string>())].map(([where, releaseId]) => {
            const [pipeline, stage] = where.split('/') as [string, string];
            return { pipeline, stage, releaseId };
          })
        : [];
    // As the worker reads them from the target index: the releases an ApplicationSet's children run.
    const appSetChildren = new Map<string, Map<string, string>>();
    if (fact.kind === 'application-set') {
      for (const p of pipelinesOfAppSet(this.config, fact.target)) {
        // As AppSetMemberships.note, before routing: the newest state heard, whether or not a release takes it.
        const kept = this.appSets.get(p.name) ?? this.appSets.set(p.name, new Map()).get(p.name)!;
        const state = appSetStateOf(fact);
        if (compareAppSetStates(state, kept.get(targetKey(fact.target))) > 0) kept.set(targetKey(fact.target), state);
        const index = this.targetsOf(p.name);
        appSetChildren.set(p.name, new Map(childTargetKeys(fact).flatMap((k) => (index.has(k) ? [[k, index.get(k)!.releaseId] as [string, string]] : []))));
      }
    }
    const known = new Map<string, KnownAppSets>([...this.appSets].map(([p, m]) => [p, Object.fromEntries(m)]));
    for (const route of resolveRoutes(this.config, fact, managed, appSetChildren, this.kargoHints(fact), known)) {
      const pipeline = route.pipeline.name;
      const key = `${pipeline}/${route.releaseId}`;
      const item = { fact, route };
      const index = this.targetsOf(pipeline);
      // As TargetIndex.knownTargets and TargetIndex.ownedOf, by the same rules.
      const knownTargets = knownByStage(index, fact.receivedAt, this.config.settings.forgetTargetAfterMinutes * 60_000).byStage;
      const owned = ownedTarget(item);
      const entry = owned !== undefined ? index.get(owned) : undefined;
      const { releaseId: ownerId, kargo } = entry ? ownedFromEntry(entry) : {};
      const previous = ownerId !== undefined ? new Map([[owned!, ownerId]]) : new Map<string, string>();
      const kargoSeen = kargo ? new Map<string, KargoSeen>([[owned!, kargo]]) : new Map<string, KargoSeen>();
      const current = this.records.get(key);
      const appSets = known.get(pipeline);
      const handed = this.store ? this.store.load(key, current) : current ? structuredClone(current) : undefined;
      const step = reduceReleaseBatch(handed, [item], { config: this.config, knownTargets, targetReleases: index, previousOfTarget: previous, kargoSeen, ...(this.ownActions ? { ownActions: this.ownActions } : {}), ...(appSets ? { appSets } : {}) });
      out.push(...step.outcomes);
      this.outcomes.push(...step.outcomes);
      const updates = targetIndexUpdates([item], step.outcomes, step.kargoSeen);
      for (const [t, e] of updates.removed) index.set(t, e);
      if (!step.changed || !step.record) continue;
      this.records.set(key, step.record);
      this.store?.save(key, step.record);
      for (const [t, e] of updates.targets) index.set(t, e);
      for (const [application, where] of updates.applications) {
        let byStage = this.applications.get(application);
        if (!byStage) this.applications.set(application, (byStage = new Map()));
        byStage.set(`${where.pipeline}/${where.stage}`, where.releaseId);
      }
      for (const effect of step.effects) {
        this.effects.push({ releaseId: route.releaseId, effect });
        if (effect.type === 'release.supersede') {
          this.apply({
            kind: 'superseded',
            source: 'internal',
            receivedAt: fact.receivedAt,
            pipeline,
            releaseId: effect.releaseId,
            target: effect.target,
            byReleaseId: route.releaseId,
            at: effect.at,
          });
        }
      }
    }
    return out;
  }
}
