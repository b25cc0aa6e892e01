/**
 * Which rollout of an ApplicationSet a child's fact joins depends on what was placed before it
 * (appset-rollouts.ts), so the worker places children in the order their facts were handed in,
 * though it reduces a job's facts, and several jobs, at once. A child whose newer fact overtook its
 * older one joined the previous rollout at the new commit: the old thread read Complete under the
 * new commit's name (CI, appset-own-revisions, under the full suite). That overtaking cannot be
 * made to happen on demand here (turns-in-order.test.ts shows a later fact that is ready first
 * waiting); this test drives the whole change through the real worker and Redis as the watch
 * queues it under load, in one job: every child settled at one commit, then moved to the next, the
 * ApplicationSet's stream behind. A turn never given back would hang it; a child placed out of
 * order would leave it in the old release.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import type { ApplicationFact, ApplicationSetFact } from '../../src/facts/fact.js';
import { revisionReleaseId } from '../../src/routing/route.js';
import { APPSET_PIPELINE, APPSET_STEPS, appSetPipelineConfig, factOf, rollingSyncTimeline, type Observation } from '../helpers/appset-world.js';
import { startTestGlidepath } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';

const BEFORE = 'e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1';
const AFTER = 'f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2';

let app: Glidepath | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * Each child settled at BEFORE (its first fact), then the change to AFTER, the children's facts
 * first and the ApplicationSet's after them (its stream lagging).
 */
function heard(): (ApplicationFact | ApplicationSetFact)[] {
  const settled = rollingSyncTimeline(APPSET_STEPS, BEFORE, { rv: 10 });
  const latestApps = new Map(settled.filter((o) => o.kind === 'app').map((o) => [o.name, o]));
  const moved = rollingSyncTimeline(APPSET_STEPS, AFTER, { from: BEFORE, rv: 1000, at: '2026-08-20T10:00:00Z' });
  const ordered: Observation[] = [...latestApps.values(), ...moved.filter((o) => o.kind === 'app'), settled.at(-1)!, ...moved.filter((o) => o.kind === 'appset')];
  const base = Date.now();
  return ordered.map((o, i) => factOf(o, base + i));
}

describe('ApplicationSet rollouts: placed in the order heard', () => {
  it('a change queued as one job with its children\'s settled facts: every child runs the new commit in one thread, the old release holds none of it', async () => {
    const started = (app = await startTestGlidepath(appSetPipelineConfig()));
    // One turn of the event loop: one batch job, whose facts the worker takes at once.
    await Promise.all(heard().map((f) => started.facts.add(f)));
    const [after, before] = [revisionReleaseId(AFTER), revisionReleaseId(BEFORE)];
    const record = await waitFor(async () => {
      const r = await started.store.get(APPSET_PIPELINE, after);
      return r?.status === 'Complete' ? r : undefined;
    }, `${after} Complete`, 30_000).catch(async (err: Error) => {
      const old = await started.store.get(APPSET_PIPELINE, before);
      throw new Error(`${err.message}; ${before} holds ${JSON.stringify(old?.stages.map((s) => Object.values(s.targets).map((t) => `${t.ref.name}@${t.revision?.slice(0, 4)}`)))}`, { cause: err });
    });
    const running = record.stages.flatMap((s) => Object.values(s.targets)).filter((t) => t.supersededBy === undefined);
    expect(running.map((t) => `${t.ref.name}@${t.revision}`).sort()).toEqual(APPSET_STEPS.flat().map((n) => `${n}@${AFTER}`).sort());
    const old = await started.store.get(APPSET_PIPELINE, before);
    expect(old?.stages.flatMap((s) => Object.values(s.targets)).filter((t) => t.revision === AFTER).map((t) => t.ref.name) ?? []).toEqual([]);
  }, 60_000);
});
