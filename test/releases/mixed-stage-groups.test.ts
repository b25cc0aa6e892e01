/**
 * A stage's pending targets and its other releases (mixed-stage.ts stagePending) read the known
 * targets grouped by release (known-by-release.ts) instead of walking them all on every fact. The
 * property: for any known list, index entries, lineage and stage, the answer is the walk's, the
 * rule as docs/reducer.md and mixed-stage.ts state it (written out here target by target), again
 * after the stage's targets are written as the reducer writes them (the split kept between facts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import type { KnownTarget, ReduceContext } from '../../src/releases/reduce/context.js';
import { stagePending } from '../../src/releases/reduce/mixed-stage.js';
import { APP_LABELS, MIXED_RELEASES_NAMED, MIXED_TARGETS_NAMED } from '../../src/releases/reduce/other-releases.js';
import type { ReleaseRecord, StageState, TargetState } from '../../src/releases/record/record.js';
import { putTarget } from '../../src/releases/record/target-writes.js';

const config = parseConfigFile(`
clusters:
  - { name: prod, kubeconfigContext: prod, optional: true }
pipelines:
  - name: shop
    channel: C0123SHOP
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "part-of=shop" } }
`);
const pipeline = config.pipelines[0]!;

const keyOf = (i: number): string => `prod/shop/Rollout/svc-${String(i).padStart(2, '0')}`;
// More releases than a stage names (MIXED_RELEASES_NAMED), and enough app values for a split to be found often.
const RELEASES = ['', ...Array.from({ length: 14 }, (_, i) => `r${i + 1}`)];
const APPS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

/** The rule, target by target: still to start when it runs no release, this one, one this release's targets ran, or carries one of its app labels. */
function walked(record: ReleaseRecord, stage: StageState, known: readonly string[], index: ReadonlyMap<string, KnownTarget>): { pending: string[]; others?: Map<string, string[]> } {
  const pending = [...known].sort().filter((k) => !Object.hasOwn(stage.targets, k));
  const own = Object.values(stage.targets).filter((t) => t.supersededBy === undefined);
  const ownApps = new Set(own.flatMap((t) => APP_LABELS.flatMap((l) => (t.appLabels?.[l] !== undefined ? [`${l}=${t.appLabels[l]}`] : []))));
  const still: string[] = [];
  const others = new Map<string, string[]>();
  for (const key of pending) {
    const entry = index.get(key);
    const releaseId = entry?.releaseId;
    const sameApp = APP_LABELS.some((l) => entry?.appLabels?.[l] !== undefined && ownApps.has(`${l}=${entry.appLabels[l]}`));
    if (!releaseId || releaseId === record.releaseId || (record.movedFrom ?? []).includes(releaseId) || sameApp) still.push(key);
    else others.set(releaseId, [...(others.get(releaseId) ?? []), key]);
  }
  return others.size === 0 ? { pending } : { pending: still, others };
}

/** The label that splits the stage ('app' here): one value among its own targets, one per other release, all different. */
function splitOf(targets: readonly TargetState[], others: ReadonlyMap<string, string[]>, index: ReadonlyMap<string, KnownTarget>): { label: string; value: string; values: Map<string, string> } | undefined {
  const ownValues = new Set(targets.filter((t) => t.supersededBy === undefined).map((t) => t.appLabels?.app));
  const [value] = ownValues;
  if (ownValues.size !== 1 || value === undefined) return undefined;
  const taken = [value];
  const byRelease = new Map<string, string>();
  for (const [releaseId, keys] of others) {
    const values = new Set(keys.map((k) => index.get(k)?.appLabels?.app));
    const [other] = values;
    if (values.size !== 1 || other === undefined || taken.includes(other)) return undefined;
    taken.push(other);
    byRelease.set(releaseId, other);
  }
  return { label: 'app', value, values: byRelease };
}

const arbitraryCase = fc.record({
  known: fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { maxLength: 30 }),
  entries: fc.array(fc.record({ target: fc.integer({ min: 0, max: 30 }), release: fc.constantFrom(...RELEASES), app: fc.option(fc.constantFrom(...APPS), { nil: undefined }) }), { maxLength: 40 }),
  own: fc.uniqueArray(fc.record({ target: fc.integer({ min: 0, max: 30 }), superseded: fc.boolean(), app: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }) }), { minLength: 1, maxLength: 8, selector: (t) => t.target }),
  movedFrom: fc.subarray(['r2', 'r3', 'r12']),
  // Writes after the first answers, as the reducer makes them (putTarget): a new state alone, a
  // target relabelled, superseded or active again.
  edits: fc.array(fc.record({ at: fc.nat(), change: fc.constantFrom('state', 'app-a', 'app-b', 'no-app', 'superseded', 'active') }), { maxLength: 4 }),
});

describe('a stage that mixes apps, by groups of the known targets', () => {
  it('gives the pending targets and other releases that walking every known target gives', () => {
    fc.assert(
      fc.property(arbitraryCase, ({ known, entries, own, movedFrom, edits }) => {
        const index = new Map<string, KnownTarget>(entries.map((e) => [keyOf(e.target), { stage: 'prod', releaseId: e.release, heardAt: 0, ...(e.app ? { appLabels: { app: e.app } } : {}) }]));
        const targets: Record<string, TargetState> = Object.fromEntries(
          own.map((t) => [keyOf(t.target), { ref: { kind: 'Rollout', cluster: 'prod', namespace: 'shop', name: `svc-${String(t.target).padStart(2, '0')}` }, ...(t.superseded ? { supersededBy: 'r9' } : {}), ...(t.app ? { appLabels: { app: t.app } } : {}) } as unknown as TargetState]),
        );
        const stage = { name: 'prod', cluster: 'prod', status: 'Progressing', targets, pending: [] } as unknown as StageState;
        const record = { pipeline: 'shop', releaseId: 'r1', stages: [stage], ...(movedFrom.length > 0 ? { movedFrom } : {}) } as unknown as ReleaseRecord;
        const knownList = known.map(keyOf);
        const ctx = { pipeline, knownTargets: { prod: knownList }, targetReleases: index } as unknown as ReduceContext;
        const check = (): void => {
          const expected = walked(record, stage, knownList, index);
          const hasOwn = Object.values(targets).some((t) => t.supersededBy === undefined);
          expect(stagePending(record, stage, ctx)).toEqual(hasOwn ? expected.pending : [...knownList].sort().filter((k) => !Object.hasOwn(targets, k)));
          if (!hasOwn || !expected.others) {
            expect(stage.otherReleases).toBeUndefined();
            return;
          }
          const releaseIds = [...expected.others.keys()].sort();
          expect(stage.otherReleases?.releaseCount).toBe(releaseIds.length);
          const split = splitOf(Object.values(targets), expected.others, index);
          expect(stage.otherReleases?.others.map((o) => [o.releaseId, o.count, o.targets, o.app])).toEqual(
            releaseIds.slice(0, MIXED_RELEASES_NAMED).map((r) => [r, expected.others!.get(r)!.length, [...expected.others!.get(r)!].sort().slice(0, MIXED_TARGETS_NAMED), split?.values.get(r)]),
          );
          expect(stage.otherReleases?.split).toEqual(split && { label: split.label, value: split.value });
          expect(stage.otherReleases?.own.app).toBe(split?.value);
        };
        // Twice: the second time from the groups kept for this index and list, and the split kept for these targets.
        check();
        check();
        const keys = Object.keys(targets);
        for (const { at, change } of edits) {
          const key = keys[at % keys.length]!;
          const { appLabels: _labels, supersededBy: _by, ...was } = targets[key]!;
          const labels = change === 'app-a' ? { appLabels: { app: 'a' } } : change === 'app-b' ? { appLabels: { app: 'b' } } : change === 'no-app' || !_labels ? {} : { appLabels: _labels };
          const superseded = change === 'superseded' || (change !== 'active' && _by !== undefined) ? { supersededBy: 'r9' } : {};
          putTarget(targets, key, { ...was, ...labels, ...superseded, ...(change === 'state' ? { step: at } : {}) } as TargetState);
          check();
        }
      }),
      { numRuns: 1000 },
    );
  });
});
