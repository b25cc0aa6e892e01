/**
 * Drives the pure reducer the way the reducer worker does (routing, the target index,
 * superseded facts fed back), with plain maps instead of Redis, for exhaustive pure tests.
 */
import type { ConfigFile } from '../../src/config/file.js';
import { stallAfterMs } from '../../src/config/file.js';
import type { Fact, RolloutFact } from '../../src/facts/fact.js';
import { targetKey } from '../../src/facts/fact.js';
import { normaliseRollout } from '../../src/facts/normalise.js';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { reduce, type ReduceOutcome } from '../../src/releases/reduce.js';
import type { Effect, ReleaseRecord } from '../../src/releases/record.js';
import { routeFact } from '../../src/releases/route.js';

export function rolloutFact(body: unknown, receivedAt: number, cluster = 'prod'): RolloutFact {
  return normaliseRollout(rolloutFactBody.parse(body), cluster, receivedAt);
}

export class Harness {
  readonly records = new Map<string, ReleaseRecord>();
  readonly targets = new Map<string, { stage: string; releaseId: string; heardAt: number }>();
  readonly effects: { releaseId: string; effect: Effect }[] = [];
  readonly outcomes: ReduceOutcome[] = [];

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

  apply(fact: Fact): ReduceOutcome[] {
    const out: ReduceOutcome[] = [];
    const pipeline = this.config.pipelines[0]!;
    const routes =
      fact.kind === 'rollout' || fact.kind === 'application'
        ? routeFact(this.config, fact).map((r) => ({ stage: r.stage.name, releaseId: r.releaseId, idSource: r.idSource }))
        : [{ stage: undefined, releaseId: fact.releaseId, idSource: undefined }];
    for (const route of routes) {
      const key = `${pipeline.name}/${route.releaseId}`;
      const target = fact.kind === 'rollout' ? targetKey(fact.target) : undefined;
      const knownTargets: Record<string, string[]> = {};
      for (const [t, e] of this.targets) (knownTargets[e.stage] ??= []).push(t);
      const result = reduce(this.records.get(key), fact, {
        pipeline,
        releaseId: route.releaseId,
        stage: route.stage,
        idSource: route.idSource,
        previousReleaseOfTarget: target ? this.targets.get(target)?.releaseId : undefined,
        knownTargets,
        stallAfterMs: stallAfterMs(this.config, pipeline),
        unhealthyGraceMs: this.config.settings.unhealthyGraceMinutes * 60_000,
        hookPinnedAfterMs: this.config.settings.hookPinnedAfterMinutes * 60_000,
      });
      out.push(result.outcome);
      this.outcomes.push(result.outcome);
      if (!result.record) continue;
      this.records.set(key, result.record);
      if (target && route.stage && (result.outcome === 'applied' || result.outcome === 'heartbeat')) {
        this.targets.set(target, { stage: route.stage, releaseId: route.releaseId, heardAt: fact.receivedAt });
      }
      for (const effect of result.effects) {
        this.effects.push({ releaseId: route.releaseId, effect });
        if (effect.type === 'release.supersede') {
          this.apply({
            kind: 'superseded',
            source: 'internal',
            receivedAt: fact.receivedAt,
            pipeline: pipeline.name,
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
