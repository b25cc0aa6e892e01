/**
 * The known targets of a stage (what a release's "not started" counts come from) are reused
 * across facts; whatever is reused, they must say what the target index holds: a target that
 * joins, moves to another stage, is forgotten or is heard again after it was forgotten.
 * And a release's pending targets, stored in a field of their own, read back as saved, from
 * records saved either way.
 */
import { redisClient } from '../helpers/slack-harness.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TargetIndex } from '../../src/releases/store/target-index.js';
import { decodeRecord, diffFields, encodeRecord, HEAD_FIELD } from '../../src/releases/store/record-codec.js';
import { newRecord } from '../../src/releases/reduce/record-factory.js';
import { pendingTargets } from '../../src/releases/record/pending.js';
import { dropTarget, putTarget } from '../../src/releases/record/target-writes.js';
import { createKeys } from '../../src/store/keys.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-09-01T00:00:00Z');
const prefix = uniquePrefix();
let redis: Redis;

beforeAll(() => {
  redis = redisClient();
});
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(prefix);
});

const entry = (stage: string, heardAt: number) => ({ stage, releaseId: 'rel-1', heardAt });
const sorted = (byStage: Readonly<Record<string, string[]>>) => Object.fromEntries(Object.entries(byStage).map(([s, ts]) => [s, [...ts].sort()]));

describe('known targets', () => {
  it('follow joins, stage moves, forgetting and hearing again, however often they are asked', async () => {
    // A cache longer than the test: only the index's own bookkeeping can keep the lists right.
    const index = new TargetIndex(redis, createKeys(prefix), { forgetAfterMs: 10 * MINUTE, cacheMs: 1e12 });
    await index.recordMany('shop', [['a', entry('prod', T0)], ['b', entry('prod', T0 + MINUTE)]]);
    expect(sorted(await index.knownTargets('shop', T0 + MINUTE))).toEqual({ prod: ['a', 'b'] });

    await index.recordMany('shop', [['c', entry('prod', T0 + 2 * MINUTE)]]);
    expect(sorted(await index.knownTargets('shop', T0 + 2 * MINUTE))).toEqual({ prod: ['a', 'b', 'c'] });

    await index.recordMany('shop', [['b', entry('staging', T0 + 3 * MINUTE)]]);
    expect(sorted(await index.knownTargets('shop', T0 + 3 * MINUTE))).toEqual({ prod: ['a', 'c'], staging: ['b'] });

    // a was last heard at T0: forgotten after ten minutes, and counted again once heard again.
    expect(sorted(await index.knownTargets('shop', T0 + 10 * MINUTE + 1))).toEqual({ prod: ['c'], staging: ['b'] });
    await index.recordMany('shop', [['a', entry('prod', T0 + 11 * MINUTE)]]);
    expect(sorted(await index.knownTargets('shop', T0 + 11 * MINUTE))).toEqual({ prod: ['a', 'c'], staging: ['b'] });

    // A batch of older facts asks about an earlier time: the targets heard by then, not later ones.
    expect(sorted(await index.knownTargets('shop', T0 + 12 * MINUTE + 1))).toEqual({ prod: ['a'], staging: ['b'] });
    expect(sorted(await index.knownTargets('shop', T0 + 12 * MINUTE))).toEqual({ prod: ['a', 'c'], staging: ['b'] });
  });
});

describe('what each target runs, read at a version', () => {
  it('is kept while only this replica writes, and read again once another replica writes or the index is gone', async () => {
    const keys = createKeys(prefix);
    // cacheMs 0: every ask goes to Redis; only the index's version may keep the read.
    const here = new TargetIndex(redis, keys, { forgetAfterMs: 10 * MINUTE, cacheMs: 0 });
    const other = new TargetIndex(redis, keys, { forgetAfterMs: 10 * MINUTE, cacheMs: 0 });
    const running = async (): Promise<Record<string, string>> => Object.fromEntries([...(await here.knownTargetReleases('versioned', T0 + 5 * MINUTE))].map(([t, e]) => [t, e.releaseId]));
    await here.recordMany('versioned', [['a', entry('prod', T0)]]);
    expect(await running()).toEqual({ a: 'rel-1' });
    // Nothing written since: the same Map (what the reducer derived from it stays valid).
    const first = await here.knownTargetReleases('versioned', T0 + 5 * MINUTE);
    expect(await here.knownTargetReleases('versioned', T0 + 5 * MINUTE)).toBe(first);
    // This replica's own write: in what it keeps, without reading the hash again (the same Map,
    // as a write that changes no target's release keeps it: TargetIndex.recordMany).
    await here.recordMany('versioned', [['a', entry('prod', T0 + MINUTE)]]);
    const heardAgain = await here.knownTargetReleases('versioned', T0 + 5 * MINUTE);
    expect(heardAgain).toBe(first);
    expect(heardAgain.get('a')?.heardAt).toBe(T0 + MINUTE);
    await here.recordMany('versioned', [['b', { stage: 'prod', releaseId: 'rel-2', heardAt: T0 + MINUTE }]]);
    expect(await running()).toEqual({ a: 'rel-1', b: 'rel-2' });
    const afterOwn = await here.knownTargetReleases('versioned', T0 + 5 * MINUTE);
    expect(await here.knownTargetReleases('versioned', T0 + 5 * MINUTE)).toBe(afterOwn);
    // Another replica's write moves the version past ours: read again.
    await other.recordMany('versioned', [['a', { stage: 'prod', releaseId: 'rel-3', heardAt: T0 + 2 * MINUTE }]]);
    expect(await running()).toEqual({ a: 'rel-3', b: 'rel-2' });
    // The index expired: nothing is known, whatever was kept.
    await redis.del(keys.targetReleases('versioned'));
    expect(await running()).toEqual({});
  });
});

describe('the releases an ApplicationSet\'s children run', () => {
  it('are what the index holds, whichever replica wrote it last, however often the same children are asked', async () => {
    const keys = createKeys(prefix);
    const here = new TargetIndex(redis, keys, { forgetAfterMs: 10 * MINUTE });
    const other = new TargetIndex(redis, keys, { forgetAfterMs: 10 * MINUTE });
    const children = ['c/ns/app:a', 'c/ns/app:b', 'c/ns/app:c'];
    const running = async (): Promise<string[]> => [...new Set((await here.releasesAmong('sets', children)).values())].sort();
    expect(await running()).toEqual([]);
    await here.recordMany('sets', [[children[0]!, { stage: 'step-1', releaseId: 'rel-1', heardAt: T0 }], [children[1]!, { stage: 'step-1', releaseId: 'rel-1', heardAt: T0 }]]);
    expect(await running()).toEqual(['rel-1']);
    // Asked again with nothing written since: the answer kept here (one small read, not the script).
    const kept = await here.releasesAmong('sets', children);
    expect(await here.releasesAmong('sets', children)).toBe(kept);
    // Another replica moves a child on: the next ask says so.
    await other.recordMany('sets', [[children[1]!, { stage: 'step-1', releaseId: 'rel-2', heardAt: T0 + MINUTE }]]);
    expect(await here.releasesAmong('sets', children)).not.toBe(kept);
    expect(await running()).toEqual(['rel-1', 'rel-2']);
    // A Kargo-style tombstone names no release.
    await other.recordMany('sets', [[children[0]!, { stage: 'step-1', releaseId: '', heardAt: T0 + 2 * MINUTE, kargo: { resourceVersion: '9', removed: true } }]]);
    expect(await running()).toEqual(['rel-2']);
    // The index gone (expired): nothing is running, whatever was read before.
    await redis.del(keys.targetReleases('sets'));
    expect(await running()).toEqual([]);
  });
});

describe('pending targets', () => {
  const pipeline = testConfig().pipelines[0]!;

  it('are the known targets not started yet, sorted, whatever order the index lists them in', () => {
    const record = newRecord(pipeline, 'rel-1', 'annotation', [], T0);
    const stage = record.stages[0]!;
    // Through target-writes.ts, as the reducer writes: pendingTargets keeps its result by the key list.
    putTarget(stage.targets, 'prod/shop/b', { ref: { cluster: 'prod', namespace: 'shop', name: 'b', kind: 'Rollout' }, images: [], phase: 'Healthy', message: '', aborted: false, phaseSince: T0, lastHeardAt: T0 });
    const known = ['prod/shop/d', 'prod/shop/b', 'prod/shop/a', 'prod/shop/c'];
    stage.pending = pendingTargets(stage, known);
    expect(stage.pending).toEqual(['prod/shop/a', 'prod/shop/c', 'prod/shop/d']);
    dropTarget(stage.targets, 'prod/shop/b');
    expect(pendingTargets(stage, known)).toEqual(['prod/shop/a', 'prod/shop/b', 'prod/shop/c', 'prod/shop/d']);
    // Without known targets the stage keeps what it had, less the targets that started.
    expect(pendingTargets(stage, undefined)).toEqual(['prod/shop/a', 'prod/shop/c', 'prod/shop/d']);
  });

  it('read back as saved, are not sent again while unchanged, and records saved with them in the head still read', () => {
    const record = newRecord(pipeline, 'rel-1', 'annotation', [], T0);
    record.stages[0]!.pending = ['prod/shop/a', 'prod/shop/b'];
    const fields = encodeRecord(record);
    expect(decodeRecord(fields, 3)).toEqual({ ...record, version: 3 });

    // The head, sent on every save, does not carry them.
    expect(fields.get(HEAD_FIELD)).not.toContain('prod/shop/a');
    const again = decodeRecord(fields, 3)!;
    again.lastHeardAt = T0 + MINUTE;
    expect(diffFields(fields, encodeRecord(again)).set.map(([f]) => f)).toEqual([HEAD_FIELD]);

    // The layout before pending had its own field: pending inside the head's stage rows.
    const old = new Map([...fields].filter(([f]) => !f.startsWith('p\u0000')));
    const head = JSON.parse(old.get(HEAD_FIELD)!) as { stages: { pending?: string[] }[] };
    head.stages[0]!.pending = ['prod/shop/a', 'prod/shop/b'];
    old.set(HEAD_FIELD, JSON.stringify(head));
    expect(decodeRecord(old, 3)).toEqual({ ...record, version: 3 });
  });
});
