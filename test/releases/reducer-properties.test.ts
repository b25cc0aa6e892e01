/**
 * Delivery is at most once, repeated, late and out of order; heartbeats carry the current
 * state. Whatever the delivery did, the record must end the same as with a clean stream.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { reduce, reduceDraft } from '../../src/releases/reduce/reduce.js';
import { stageDone } from '../../src/releases/reduce/derive.js';
import type { ReduceContext } from '../../src/releases/reduce/context.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, type RolloutShape } from '../helpers/rollout-bodies.js';
import { testConfig } from '../helpers/pipeline.js';

type Transition = 'newRelease' | 'step' | 'healthy' | 'scale' | 'degrade' | 'abort' | 'retry';
const PAUSE_STEPS = new Set([1, 3, 6]);

interface Walk {
  shape: RolloutShape;
  releases: number;
}

function start(name: string, uid: string): Walk {
  return { shape: { name, uid, generation: 1, rv: 0, releaseId: 'rel-1', image: 'r.example/shop/checkout:1', podHash: 'h1', stableRS: 'h1', phase: 'Healthy', replicas: 3 }, releases: 1 };
}

function next(w: Walk, t: Transition, rv: number): Walk {
  const s = { ...w.shape, rv, event: `on-${t}` };
  const rolling = s.podHash !== s.stableRS;
  let releases = w.releases;
  switch (t) {
    case 'newRelease':
      releases += 1;
      Object.assign(s, { generation: s.generation + 1, releaseId: `rel-${releases}`, image: `r.example/shop/checkout:${releases}`, podHash: `h${releases}`, step: 0, phase: 'Progressing', abort: false, message: 'more replicas need to be updated' });
      break;
    case 'step':
      if (!rolling || s.abort) return { shape: { ...s }, releases };
      s.step = (s.step ?? 0) + 1;
      if (s.step >= 7) Object.assign(s, { stableRS: s.podHash, step: 7, phase: 'Healthy', message: undefined });
      else if (PAUSE_STEPS.has(s.step)) Object.assign(s, { phase: 'Paused', message: 'CanaryPauseStep' });
      else Object.assign(s, { phase: 'Progressing', message: 'more replicas need to be updated' });
      break;
    case 'healthy':
      if (rolling && !s.abort) Object.assign(s, { stableRS: s.podHash, step: 7, phase: 'Healthy', message: undefined });
      break;
    case 'scale':
      Object.assign(s, { generation: s.generation + 1, replicas: (s.replicas ?? 3) === 3 ? 5 : 3 });
      break;
    case 'degrade':
      if (rolling && !s.abort) Object.assign(s, { phase: 'Degraded', message: 'ProgressDeadlineExceeded: ReplicaSet has timed out progressing.' });
      break;
    case 'abort':
      if (rolling) Object.assign(s, { abort: true, step: 0, phase: 'Degraded', message: 'RolloutAborted: Rollout aborted update to revision 4' });
      break;
    case 'retry':
      if (s.abort) Object.assign(s, { abort: false, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' });
      break;
  }
  return { shape: s, releases };
}

const transition = fc.constantFrom<Transition>('newRelease', 'step', 'step', 'step', 'healthy', 'scale', 'degrade', 'abort', 'retry');
const delivery = fc.record({
  mode: fc.constantFrom('deliver', 'drop', 'duplicate', 'delay', 'stale'),
  delayBy: fc.integer({ min: 1, max: 6 }),
});

/** The parts of a record a person sees, without arrival times and delivery counters. */
function view(records: Map<string, ReleaseRecord>) {
  return [...records.values()]
    .sort((a, b) => a.releaseId.localeCompare(b.releaseId))
    .map((r) => ({
      releaseId: r.releaseId,
      status: r.status,
      images: r.images,
      notices: [...r.notices].sort(),
      events: r.events.map((e) => `${e.kind} ${e.target ?? ''} ${e.detail}`),
      stages: r.stages.map((s) => ({
        name: s.name,
        status: s.status,
        latched: s.healthyAt !== undefined,
        pending: s.pending,
        targets: Object.entries(s.targets).map(([k, t]) => ({
          k, phase: t.phase, podHash: t.podHash, step: t.step, weight: t.weight, aborted: t.aborted, supersededBy: t.supersededBy, generation: t.generation, rv: t.resourceVersion,
        })),
      })),
    }));
}

const T0 = Date.parse('2026-09-01T00:00:00Z');

function harness(): Harness {
  const config = testConfig();
  // Post-latch Degraded is judged on time; this property is about order and loss, so switch it off.
  config.settings.unhealthyGraceMinutes = 1e9;
  return new Harness(config);
}

describe('reducer properties', () => {
  it('drops, duplicates, delays and stale facts, plus heartbeats, end in the same record as the clean stream', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), transition), { minLength: 1, maxLength: 40 }),
        fc.array(delivery, { minLength: 40, maxLength: 40 }),
        (script, deliveries) => {
          const walks = [start('checkout', 'uid-a'), start('checkout-worker', 'uid-b')];
          const states: { shape: RolloutShape; at: number }[] = [];
          let rv = 100;
          walks.forEach((w) => states.push({ shape: { ...w.shape, rv: rv++ }, at: T0 }));
          walks[0]!.shape.rv = 100;
          walks[1]!.shape.rv = 101;
          script.forEach(([who, t], i) => {
            walks[who] = next(walks[who]!, t, rv++);
            states.push({ shape: walks[who]!.shape, at: T0 + (i + 1) * 60_000 });
          });

          const clean = harness();
          for (const s of states) clean.apply(rolloutFact(rolloutBody(s.shape), s.at));

          const noisy = harness();
          const late: { body: unknown; slot: number }[] = [];
          states.forEach((s, i) => {
            const d = deliveries[i % deliveries.length]!;
            const body = rolloutBody(s.shape);
            if (d.mode === 'deliver' || d.mode === 'duplicate') noisy.apply(rolloutFact(body, s.at));
            if (d.mode === 'duplicate') noisy.apply(rolloutFact(body, s.at));
            if (d.mode === 'delay') late.push({ body, slot: i + d.delayBy });
            if (d.mode === 'stale') {
              // Sent before the controller observed the generation: the previous state's status.
              noisy.apply(rolloutFact(rolloutBody({ ...s.shape, observedGeneration: s.shape.generation - 1, phase: 'Healthy', podHash: 'old', stableRS: 'old' }), s.at));
            }
            for (const l of late.filter((x) => x.slot === i)) noisy.apply(rolloutFact(l.body, s.at));
            // The periodic heartbeat of the current state (a new sentAt, same object).
            noisy.apply(rolloutFact(rolloutBody({ ...s.shape, sentAt: 1 }), s.at));
          });
          for (const l of late.filter((x) => x.slot >= states.length)) noisy.apply(rolloutFact(l.body, T0 + 10_000 * 60_000));

          expect(view(noisy.records)).toEqual(view(clean.records));
          // Every reply a person got from the clean stream, they got exactly once from the noisy one.
          const replyIds = (h: Harness) => h.replies().map((r) => `${r.releaseId} ${r.effect.id}`).sort();
          expect(replyIds(noisy)).toEqual(replyIds(clean));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a stale fact never changes a record', () => {
    fc.assert(
      fc.property(fc.array(transition, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 19 }), (script, at) => {
        let w = start('checkout', 'uid-a');
        const h = harness();
        let rv = 10;
        script.forEach((t, i) => {
          w = next(w, t, rv++);
          h.apply(rolloutFact(rolloutBody(w.shape), T0 + i * 1000));
          if (i === Math.min(at, script.length - 1)) {
            const before = structuredClone([...h.records.entries()]);
            const stale = rolloutBody({ ...w.shape, rv: rv++, generation: w.shape.generation + 1, observedGeneration: w.shape.generation, phase: 'Degraded', message: 'x' });
            expect(h.apply(rolloutFact(stale, T0 + i * 1000 + 500))).toEqual(['stale']);
            expect([...h.records.entries()]).toEqual(before);
          }
        });
      }),
      { numRuns: 200 },
    );
  });

  it('a release is Complete only when every stage is done with it, whenever its targets are first heard', () => {
    // One pipeline of one stage with two Rollouts; the second one is heard first at a random
    // point (a Rollout the stage did not know yet, as after a restart of Glidepath).
    const config = testConfig(`  - name: solo
    channel: C0123SOLO
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=solo" }
`);
    config.settings.unhealthyGraceMinutes = 1e9;
    const labels = { 'app.kubernetes.io/part-of': 'solo' };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), transition), { minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 30 }), (script, joinsAt) => {
        const h = new Harness(config);
        const walks = [start('solo-a', 'uid-a'), start('solo-b', 'uid-b')];
        let rv = 100;
        script.forEach(([who, t], i) => {
          walks[who] = next(walks[who]!, t, rv++);
          // Each step, every Rollout heard so far reports its current state (the heartbeat).
          walks.forEach((w, k) => {
            if (k === 1 && i < joinsAt) return;
            h.apply(rolloutFact(rolloutBody({ ...w.shape, labels, sentAt: rv++ }), T0 + i * 60_000));
          });
          for (const record of h.records.values()) {
            if (record.status !== 'Complete') continue;
            for (const stage of record.stages) expect(stageDone(stage), `${record.releaseId} ${stage.name} pending ${stage.pending.join(',')}`).toBe(true);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('reducing a batch in place (the worker) gives the same records and effects as one copy per fact', () => {
    const config = testConfig();
    const pipeline = config.pipelines[0]!;
    const ctx: ReduceContext = { pipeline, releaseId: 'rel-1', stage: 'prod', idSource: 'annotation', stallAfterMs: 1_200_000, unhealthyGraceMs: 120_000, hookPinnedAfterMs: 600_000 };
    fc.assert(
      fc.property(fc.array(transition, { minLength: 1, maxLength: 30 }), (script) => {
        let w = start('checkout', 'uid-a');
        let rv = 10;
        const facts = script.map((t, i) => {
          w = next(w, t, rv++);
          return rolloutFact(rolloutBody({ ...w.shape, releaseId: 'rel-1' }), T0 + i * 1000);
        });
        let copied: ReleaseRecord | undefined;
        let draft: ReleaseRecord | undefined;
        for (const f of facts) {
          const a = reduce(copied, f, ctx);
          const b = reduceDraft(draft, f, ctx);
          expect(b.outcome).toBe(a.outcome);
          expect(b.effects).toEqual(a.effects);
          copied = a.record ?? copied;
          draft = b.record ?? draft;
          expect(draft).toEqual(copied);
        }
      }),
      { numRuns: 200 },
    );
  });
});

