/**
 * The Applications and their ApplicationSet come on two watch streams, each in order, and either
 * may lag the other (an API server under load, a slow relist). Whatever the interleaving, with no
 * resync after it, the record ends as it does in order: nothing heard is lost. The
 * ApplicationSet's first observation is its creation, before its controller wrote any entry, so a
 * child heard early is one it does not list yet. Through the worker's routing and batch step
 * (test/helpers/reduce-harness.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stepRow } from '../../src/slack/render/step-row.js';
import { APPSET_PIPELINE, APPSET_STEPS, OWN_REVISIONS as OWN, appSetPipelineConfig, factOf, rollingSyncTimeline, type Observation } from '../helpers/appset-world.js';
import { Harness } from '../helpers/reduce-harness.js';

const RELEASE = 'rel-2026-08-20.2';
const T0 = Date.parse('2026-08-20T10:00:00Z');
const config = appSetPipelineConfig();
const timeline = rollingSyncTimeline(APPSET_STEPS, (n) => OWN[n]!, { releaseId: RELEASE });
/** The ApplicationSet as created: no entry written yet (resourceVersions are one counter for both kinds). */
const created: Observation = { kind: 'appset', rv: 1, members: {} };
const applications = timeline.filter((o) => o.kind === 'app');
const appSets = [created, ...timeline.filter((o) => o.kind === 'appset')];

/** The two streams merged: `fromApplications[i]` says which stream delivers the i-th fact. */
function interleaved(fromApplications: readonly boolean[]): Observation[] {
  const [a, s] = [[...applications], [...appSets]];
  return fromApplications.map((first) => ((first && a.length > 0) || s.length === 0 ? a.shift() : s.shift()) as Observation);
}

function finalRows(order: readonly Observation[]): { h: Harness; rows: (string | undefined)[] } {
  const h = new Harness(config);
  order.forEach((o, i) => h.apply(factOf(o, T0 + i * 1000)));
  return { h, rows: h.record(RELEASE, APPSET_PIPELINE)?.stages.map((s) => `${s.status} · ${stepRow(s)?.head.join(' · ')}`) ?? [] };
}

describe('ApplicationSet children and their ApplicationSet on two streams', () => {
  const inOrder = finalRows([created, ...timeline]);

  it('in order: Complete, each row Healthy at its children\'s own revisions', () => {
    expect(inOrder.h.record(RELEASE, APPSET_PIPELINE)?.status).toBe('Complete');
    expect(inOrder.rows).toEqual([
      'Healthy · step 1 of 3 · 1/1 Healthy at `a1a1a1a`',
      'Healthy · step 2 of 3 · 2/2 Healthy · `checkout-eu-1` at `b2b2b2b`; `checkout-eu-2` at `c3c3c3c`',
      'Healthy · step 3 of 3 · 1/1 Healthy at `d4d4d4d`',
    ]);
  });

  it('every child heard before the ApplicationSet listed any: Complete once it does, not waiting for the children to speak again', () => {
    const { h, rows } = finalRows([created, ...applications, ...appSets.slice(1)]);
    expect(h.record(RELEASE, APPSET_PIPELINE)?.status).toBe('Complete');
    expect(rows).toEqual(inOrder.rows);
  });

  it('any interleaving of the two streams ends as in order: one record, Complete, the same rows, no out-of-order or Degraded reply', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: applications.length + appSets.length, maxLength: applications.length + appSets.length }), (fromApplications) => {
        const { h, rows } = finalRows(interleaved(fromApplications));
        expect([...h.records.keys()]).toEqual([`${APPSET_PIPELINE}/${RELEASE}`]);
        expect(h.record(RELEASE, APPSET_PIPELINE)?.status).toBe('Complete');
        expect(rows).toEqual(inOrder.rows);
        expect(h.replies('appset-out-of-order')).toEqual([]);
        expect(h.replies('degraded')).toEqual([]);
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
