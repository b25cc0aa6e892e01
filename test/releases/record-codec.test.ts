/**
 * The record codec under the worker's own batch step: a save encodes and sends only what changed
 * (each target's encoding kept by identity, each stage's key order and pending list by value), and
 * whatever fact sequence made a record, what Redis then holds reads back exactly as the record,
 * and is what a from-scratch encoding would have written. Records saved before the key order had
 * a field of its own still read back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../src/facts/fact.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { decodeRecord, diffFields, encodeRecord, HEAD_FIELD } from '../../src/releases/store/record-codec.js';
import { decodeChunks, encodeChunks, encodeChunksAfter } from '../../src/releases/store/record-chunks.js';
import { encodeMembers } from '../../src/releases/store/appset-membership-codec.js';
import type { AppSetState } from '../../src/releases/record/appset-record.js';
import { encodeChanges, type Encoded } from '../../src/releases/store/record-save.js';
import { emptiedSlots } from '../../src/releases/store/record-codec.js';
import { revisionReleaseId } from '../../src/routing/route.js';
import { factOf, rollingSyncTimeline } from '../helpers/appset-world.js';
import { kargoFreightFact, kargoShopConfig, kargoStageFact } from '../helpers/kargo-facts.js';
import { testConfig } from '../helpers/pipeline.js';
import { Harness, rolloutFact } from '../helpers/reduce-harness.js';
import { MAX_TIMELINE_STEPS } from '../../src/releases/reduce/timeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';

const T0 = Date.parse('2026-08-20T09:00:00Z');

/**
 * The fields a record saved before the key order and the ApplicationSet members had fields of
 * their own held: the key order in the head, the members in the `appsets` field.
 */
function legacyLayout(fields: ReadonlyMap<string, string>, record: ReleaseRecord): Map<string, string> {
  // Timeline slots (x\0<stage>\0…) came later too: the timeline was whole in the stage's x field.
  const out = new Map([...fields].filter(([f]) => !f.startsWith('k\u0000') && !f.startsWith('m\u0000') && !(f.startsWith('x\u0000') && f.indexOf('\u0000', 2) > 0)));
  for (const stage of record.stages) out.set(`x\u0000${stage.name}`, JSON.stringify({ timeline: stage.timeline }));
  const head = JSON.parse(fields.get(HEAD_FIELD) as string) as { stages: { name: string; targetKeys?: string[] }[] };
  for (const stage of head.stages) stage.targetKeys = Object.keys(record.stages.find((s) => s.name === stage.name)?.targets ?? {});
  out.set(HEAD_FIELD, JSON.stringify(head));
  if (record.appSets) out.set('appsets', JSON.stringify(record.appSets));
  return out;
}

function expectSame(read: ReleaseRecord | undefined, record: ReleaseRecord): void {
  expect(read).toEqual(record);
  // Equal key order too: rows list their targets in the order they were heard.
  expect(read?.stages.map((s) => Object.keys(s.targets))).toEqual(record.stages.map((s) => Object.keys(s.targets)));
}

/**
 * The release store's way with a record (src/releases/store/store.ts), with a map for Redis: the record
 * saved last is handed to the next batch once (unless `forget` says another process wrote since:
 * then it is decoded from the hash), and a save sends the fields that differ.
 */
class CodecStore {
  readonly hashes = new Map<string, Map<string, string>>();
  private readonly cache = new Map<string, { record: ReleaseRecord; encoded: Encoded }>();
  fieldsSent = 0;
  /** The longest value of a stage's timeline fields (x\0…) any save sent. */
  largestTimelineWrite = 0;
  fieldsHeld = 0;
  private loads = 0;
  private readonly versions = new Map<string, number>();
  /** The fields (and what they were encoded from) of the record last handed out, as the store keeps them. */
  private readonly handed = new Map<string, Encoded>();

  constructor(private readonly forget: readonly boolean[], private readonly legacy = false) {}

  load(key: string): ReleaseRecord | undefined {
    const entry = this.cache.get(key);
    this.cache.delete(key);
    const forget = this.forget[this.loads++ % Math.max(1, this.forget.length)] ?? false;
    if (entry && !forget) {
      this.handed.set(key, entry.encoded);
      return entry.record;
    }
    const hash = this.hashes.get(key);
    this.handed.set(key, { fields: new Map(hash) });
    return hash ? decodeRecord(hash, this.versions.get(key) ?? 0) : undefined;
  }

  save(key: string, record: ReleaseRecord): void {
    const before = this.hashes.get(key) ?? new Map<string, string>();
    this.versions.set(key, record.version);
    const changes = encodeChanges(record, this.handed.get(key));
    this.handed.delete(key);
    const after = new Map(before);
    for (const [f, v] of changes.set) after.set(f, v);
    for (const f of changes.del) after.delete(f);
    this.fieldsSent += changes.set.length;
    for (const [f, v] of changes.set) if (f.startsWith('x\u0000')) this.largestTimelineWrite = Math.max(this.largestTimelineWrite, v.length);
    this.fieldsHeld += after.size;
    // What Redis holds reads back as the record, and is what a from-scratch encoding writes; the changes are exactly the differences.
    expectSame(decodeRecord(after, record.version), record);
    const scratch = encodeRecord(structuredClone(record));
    expect(after).toEqual(scratch);
    expect(changes.after.fields).toEqual(scratch);
    expect(changes.set.map(([f]) => f).sort()).toEqual(diffFields(before, scratch).set.map(([f]) => f).sort());
    expect([...changes.del].sort()).toEqual(diffFields(before, scratch).del.sort());
    const fields = changes.after;
    if (this.legacy) {
      const old = legacyLayout(after, record);
      expectSame(decodeRecord(old, record.version), record);
      this.hashes.set(key, old);
      this.cache.delete(key);
      return;
    }
    this.hashes.set(key, after);
    this.cache.set(key, { record, encoded: fields });
  }
}

function run(h: Harness, facts: readonly Fact[], forget: readonly boolean[], legacy = false): CodecStore {
  const store = new CodecStore(forget, legacy);
  h.store = { load: (key) => store.load(key), save: (key, record) => store.save(key, record) };
  for (const f of facts) h.apply(f);
  return store;
}

const forgets = fc.array(fc.boolean(), { minLength: 1, maxLength: 7 });

describe('the release record codec under any fact sequence (the worker batch step)', () => {
  it('Rollouts: steps, pauses, heartbeats, new releases (superseded targets): saved and read back exactly', () => {
    const config = testConfig();
    config.settings.unhealthyGraceMinutes = 1e9;
    const event = fc.record({
      who: fc.constantFrom('checkout', 'checkout-worker'),
      release: fc.integer({ min: 1, max: 3 }),
      step: fc.integer({ min: 0, max: 7 }),
      phase: fc.constantFrom<'Healthy' | 'Progressing' | 'Paused' | 'Degraded'>('Healthy', 'Progressing', 'Paused', 'Degraded'),
      replicas: fc.constantFrom(3, 5),
      again: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 30 }), forgets, fc.boolean(), (events, forget, legacy) => {
        let rv = 100;
        const facts: Fact[] = [];
        events.forEach((e, i) => {
          const shape = {
            name: e.who, uid: `uid-${e.who}`, generation: e.release * 10 + (e.replicas === 5 ? 1 : 0), rv: rv++, releaseId: `rel-${e.release}`,
            image: `r.example/shop/checkout:${e.release}`, podHash: `h${e.release}`, stableRS: e.phase === 'Healthy' ? `h${e.release}` : 'h0',
            step: e.step, phase: e.phase, replicas: e.replicas, ...(e.phase === 'Paused' ? { message: 'CanaryPauseStep' } : {}),
          };
          facts.push(rolloutFact(rolloutBody(shape), T0 + i * 60_000));
          // The heartbeat: the same object again, later.
          if (e.again) facts.push(rolloutFact(rolloutBody({ ...shape, sentAt: 1 }), T0 + i * 60_000 + 30_000));
        });
        run(new Harness(config), facts, forget, legacy);
      }),
      { numRuns: 150 },
    );
  });

  it('a timeline past its bounds (a Rollout flapping between steps and pauses): each save sends the slots that changed, and reads back exactly', () => {
    const config = testConfig();
    config.settings.unhealthyGraceMinutes = 1e9;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 45, maxLength: 120 }), forgets, fc.boolean(), (steps, forget, legacy) => {
        const facts = steps.map((step, i) => {
          const paused = step % 2 === 1;
          const shape = { name: 'checkout', uid: 'uid-checkout', generation: 10, rv: 100 + i, releaseId: 'rel-1', image: 'r.example/shop/checkout:1', podHash: 'h1', stableRS: 'h0', step, phase: paused ? ('Paused' as const) : ('Progressing' as const), ...(paused ? { message: 'CanaryPauseStep' } : {}) };
          return rolloutFact(rolloutBody(shape), T0 + i * 60_000);
        });
        const h = new Harness(config);
        const store = run(h, facts, forget, legacy);
        if (legacy) return;
        // A step or a pause is a slot and the small x field, never the whole timeline again.
        const record = [...store.hashes.values()][0]!;
        expect([...record.keys()].filter((f) => f.startsWith('x\u0000')).length).toBeGreaterThan(MAX_TIMELINE_STEPS);
        expect(store.largestTimelineWrite).toBeLessThan(400);
      }),
      { numRuns: 40 },
    );
  });

  it('timeline slots the saved record filled and the timeline no longer fills are deleted (the bounds changed, the timeline went)', () => {
    const step = (i: number) => ({ target: 'checkout', index: i % 8, at: T0 + i });
    // Saved under bounds of 60 steps: 50 steps, the first 10 let go, in slots 10…59.
    const saved = JSON.stringify({ timeline: { startedAt: T0, stepsDropped: 10 }, slots: { steps: 50, holds: 0, ring: [60, 20] } });
    const slot = (n: number) => `x\u0000prod\u0000s${n}`;
    // Now bounded at MAX_TIMELINE_STEPS: the newest of them, in slots (dropped + i) % MAX.
    const dropped = 60 - MAX_TIMELINE_STEPS;
    const now = { startedAt: T0, steps: Array.from({ length: MAX_TIMELINE_STEPS }, (_, i) => step(dropped + i)), holds: [], stepsDropped: dropped };
    const kept = new Set(Array.from({ length: MAX_TIMELINE_STEPS }, (_, i) => slot((dropped + i) % MAX_TIMELINE_STEPS)));
    expect(emptiedSlots('prod', saved, now).sort()).toEqual(Array.from({ length: 50 }, (_, i) => slot(10 + i)).filter((f) => !kept.has(f)).sort());
    expect(emptiedSlots('prod', saved, undefined)).toHaveLength(50);
    expect(emptiedSlots('prod', JSON.stringify({ timeline: { startedAt: T0, steps: [step(1)], holds: [] } }), undefined)).toEqual([]);
  });

  it('ApplicationSet steps, in any order and with repeats: saved and read back exactly, and a child fact sends a few fields', () => {
    const STEPS = [['checkout-staging'], ['checkout-eu-1', 'checkout-eu-2', 'checkout-eu-3'], ['checkout-us-1', 'checkout-us-2']];
    const STAGES = ['staging', 'prod-eu', 'prod-us'];
    const config = testConfig(`
  - name: checkout-appset
    channel: C0123APPSET
    stages:
${STAGES.map((name, i) => `      - { name: ${name}, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: ${i + 1} } }`).join('\n')}
`);
    const rev = 'c0ffee1234567890abcdef1234567890abcdef12';
    const next = 'beef0001234567890abcdef1234567890abcdef1';
    const timeline = [...rollingSyncTimeline(STEPS, rev), ...rollingSyncTimeline(STEPS, next, { from: rev, rv: 1000, at: '2026-08-20T10:00:00Z' })];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: timeline.length - 1 }), { minLength: 1, maxLength: 80 }), forgets, fc.boolean(), (order, forget, legacy) => {
        const facts = [...timeline.map((o, i) => factOf(o, T0 + i * 1000)), ...order.map((i, k) => factOf(timeline[i]!, T0 + 500_000 + k * 1000))];
        const h = new Harness(config);
        const store = run(h, facts, forget, legacy);
        expect(h.record(revisionReleaseId(rev), 'checkout-appset')).toBeDefined();
        // Proportional: far fewer fields sent than the records hold.
        if (!legacy && forget.every((f) => !f)) expect(store.fieldsSent).toBeLessThan(store.fieldsHeld / 3);
      }),
      { numRuns: 60 },
    );
  });

  it('Kargo Stages and Freight, in any order: saved and read back exactly', () => {
    const config = kargoShopConfig({ dev: 'stage: dev', staging: 'stage: "regex:^stag"', prod: 'selector: "tier=prod"' });
    config.settings.unhealthyGraceMinutes = 1e9;
    const STAGE_NAMES = ['dev', 'staging', 'prod-a', 'prod-b'];
    const event = fc.record({
      stage: fc.integer({ min: 0, max: 3 }),
      freight: fc.integer({ min: 1, max: 2 }),
      state: fc.constantFrom('promoting', 'succeeded', 'healthy', 'progressing', 'freight'),
    });
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 40 }), forgets, (events, forget) => {
        let rv = 100;
        const facts = events.map((e, i): Fact => {
          const at = T0 + i * 1000;
          if (e.state === 'freight') return kargoFreightFact(e.freight, rv++, at);
          const name = STAGE_NAMES[e.stage]!;
          return kargoStageFact(name, {
            rv: rv++, labels: name.startsWith('prod') ? { tier: 'prod' } : {}, freight: e.freight,
            promotion: e.state === 'promoting' ? 'running' : 'succeeded', ...(e.state === 'healthy' ? { health: 'Healthy' } : e.state === 'progressing' ? { health: 'Progressing' } : {}),
          }, at);
        });
        run(new Harness(config), facts, forget);
      }),
      { numRuns: 150 },
    );
  });

  it('a long list in chunks reads back in order; appending to it changes its last chunks only, removing an entry few chunks', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 600, size: 'max' }), fc.nat(), (names, at) => {
        const fieldsOf = (list: string[]) => new Map(encodeChunks(list, (n) => n).map((json, i) => [`x${i}`, json]));
        const whole = fieldsOf(names);
        expect(decodeChunks<string>(whole, 'x')?.items ?? []).toEqual(names);
        if (names.length < 2) return;
        const cut = at % names.length;
        const prefix = fieldsOf(names.slice(0, cut));
        // Every chunk of a prefix but its last is a chunk of the whole list.
        expect([...prefix].filter(([f, json]) => whole.get(f) !== json).length).toBeLessThanOrEqual(1);
        const removed = fieldsOf(names.filter((_, i) => i !== cut));
        expect(decodeChunks<string>(removed, 'x')?.items).toEqual(names.filter((_, i) => i !== cut));
        const changed = [...removed].filter(([f, json]) => whole.get(f) !== json).length;
        // A chunk loses the entry; only when it ended a chunk do the later ones renumber.
        if (removed.size === whole.size) expect(changed).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('a list encoded from an earlier version of it (entries appended, removed, inserted, changed) is the list encoded from scratch', () => {
    const edit = fc.oneof(
      fc.record({ op: fc.constant('append' as const), names: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 80 }) }),
      fc.record({ op: fc.constantFrom('remove' as const, 'insert' as const, 'change' as const), at: fc.nat(), name: fc.string({ minLength: 1, maxLength: 8 }) }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 600, size: 'max' }), fc.array(edit, { maxLength: 6 }), (names, edits) => {
        let items = names.map((name) => ({ name, v: 0 }));
        let chunked = encodeChunksAfter(items, (i) => i.name, undefined);
        for (const e of edits) {
          const next = [...items];
          const at = 'at' in e && next.length > 0 ? e.at % next.length : 0;
          if (e.op === 'append') next.push(...e.names.filter((n) => !next.some((i) => i.name === n)).map((name) => ({ name, v: 0 })));
          else if (e.op === 'remove') next.splice(at, 1);
          else if (e.op === 'insert' && !next.some((i) => i.name === e.name)) next.splice(at, 0, { name: e.name, v: 0 });
          else if (e.op === 'change' && next[at]) next[at] = { ...next[at], v: (next[at].v) + 1 };
          items = next;
          chunked = encodeChunksAfter(items, (i) => i.name, chunked);
          expect(chunked.jsons).toEqual(encodeChunks(items, (i) => i.name));
          expect(decodeChunks<{ name: string; v: number }>(new Map(chunked.jsons.map((json, i) => [`x${i}`, json])), 'x')?.items ?? []).toEqual(items);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("an ApplicationSet's members encoded from the state they replace are its members encoded from scratch", () => {
    const member = fc.record({ status: fc.constantFrom('Waiting', 'Pending', 'Progressing', 'Healthy'), step: fc.constantFrom('1', '2', '3'), targetRevisions: fc.array(fc.constantFrom('a1', 'b2'), { maxLength: 2 }), message: fc.option(fc.constantFrom('m', 'n'), { nil: undefined }), since: fc.option(fc.constantFrom('t1', 't2'), { nil: undefined }) }, { requiredKeys: ['status', 'step', 'targetRevisions'] });
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.constantFrom(...Array.from({ length: 300 }, (_, i) => `child-${i}`)), member, { maxKeys: 300 }), { minLength: 1, maxLength: 5 }), (states) => {
        let previous: AppSetState['members'] | undefined;
        for (const members of states) {
          // Unchanged entries as new objects, as each ApplicationSet fact makes them.
          const fresh = structuredClone(members);
          expect(encodeMembers(fresh, previous)).toEqual(encodeChunks(Object.entries(members), ([name]) => name));
          previous = fresh;
        }
      }),
      { numRuns: 200 },
    );
  });
});
