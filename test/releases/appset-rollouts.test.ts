/**
 * The routing rule of ApplicationSet rollouts (appset-rollouts.ts), on the real Redis: a change
 * with a revision per child is one rollout in whatever order its children are heard, a repeated or
 * replayed fact routes where it did, a child changing again opens the next rollout, a finished
 * rollout takes no one, CI's announced commit names the rollout it opens, and the index stays bounded.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { AppSetRollouts, KEPT_ROLLOUTS } from '../../src/releases/worker/appset-rollouts.js';
import { createKeys } from '../../src/store/keys.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { redisClient } from '../helpers/slack-harness.js';

const config = testConfig(`
  - name: checkout-appset
    channel: C0123ROLL
    stages:
      - { name: dev, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 1 } }
      - { name: staging, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 2 } }
      - { name: prod, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 3 } }
`);
const pipeline = config.pipelines.find((p) => p.name === 'checkout-appset')!;
const APPSET = 'prod/argocd/appset:checkout';
const redis = redisClient();
const TTL = 3_600_000;
const prefixes: string[] = [];
afterAll(async () => {
  redis.disconnect();
  for (const p of prefixes) await dropPrefix(p);
});

const sha = (c: string) => c.repeat(40).slice(0, 40);
let keys = createKeys(uniquePrefix());
let rollouts = new AppSetRollouts(redis, keys, config, TTL);
/** A fresh world per case (its own key prefix): the ApplicationSet's index starts empty. */
const fresh = (): string => {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  keys = createKeys(prefix);
  rollouts = new AppSetRollouts(redis, keys, config, TTL);
  return APPSET;
};
const T0 = Date.parse('2026-12-01T10:00:00Z');

/** One change: a revision (or two, multi-source) per child. */
const change = (n: string): [string, string[]][] => [
  ['checkout-dev', [sha(`${n}a`)]],
  ['checkout-staging', [sha(`${n}b`)]],
  ['checkout-prod', [`4.${n}.0`, sha(`${n}c`)]],
];

describe('ApplicationSet rollouts: the routing index', () => {
  it('one change with a revision per child is one rollout, whichever child is heard first, and every repeat routes there again', async () => {
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }), fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 6 }), async (order, repeats) => {
        const appSet = fresh();
        const before = change('1');
        const after = change('2');
        for (const [child, revs] of before) await rollouts.rolloutOf(pipeline, appSet, child, revs, T0);
        const ids = new Set<string>();
        let t = T0 + 1000;
        for (const i of order) ids.add(await rollouts.rolloutOf(pipeline, appSet, after[i]![0], after[i]![1], (t += 1000)));
        for (const i of repeats) ids.add(await rollouts.rolloutOf(pipeline, appSet, after[i]![0], after[i]![1], (t += 1000)));
        expect(ids.size).toBe(1);
        const [id] = [...ids];
        // Named by the revision of the child that opened it.
        expect(id).toBe(`revision-${after[order[0]!]![1][0]!.slice(0, 12)}`);
      }),
      { numRuns: 12 },
    );
  });

  it('a child changing again opens the next rollout and the others join that one; a replay of an older fact goes to the rollout it was heard in', async () => {
    const appSet = fresh();
    const [one, two] = [change('1'), change('2')];
    const first = new Set<string>();
    for (const [child, revs] of one) first.add(await rollouts.rolloutOf(pipeline, appSet, child, revs, T0));
    const second = new Set<string>();
    for (const [i, [child, revs]] of two.entries()) second.add(await rollouts.rolloutOf(pipeline, appSet, child, revs, T0 + 10_000 + i));
    expect(first.size).toBe(1);
    expect(second.size).toBe(1);
    expect([...second][0]).not.toBe([...first][0]);
    // A redelivered fact heard before staging moved on: the first rollout, not a new one.
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-staging', one[1]![1], T0 + 5)).toBe([...first][0]);
    // An old fact at revisions no kept rollout holds opens nothing.
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', [sha('99')], T0 + 1)).toBe([...second][0]);
    // Dev changed back later: not the first rollout's thread again but a new rollout, its id (dev's revision) taken, so suffixed.
    const back = await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', one[0]![1], T0 + 60_000);
    expect(back).not.toBe([...first][0]);
    expect(back).not.toBe([...second][0]);
    expect(back).toBe(`revision-${one[0]![1][0]!.slice(0, 12)}.${T0 + 60_000}`);
  });

  it('a finished rollout takes no child: the next change opens a rollout of its own', async () => {
    const appSet = fresh();
    const id = await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', [sha('5a')], T0);
    // The release of the rollout finished: in the release index, out of the open-release index (store.ts).
    await redis.zadd(keys.releaseIndex(pipeline.name), T0, id);
    const next = await rollouts.rolloutOf(pipeline, appSet, 'checkout-staging', [sha('5b')], T0 + 1000);
    expect(next).not.toBe(id);
    // Still open: a release in the open index takes the next child.
    await redis.zadd(keys.openReleaseIndex(pipeline.name), T0, next);
    await redis.zadd(keys.releaseIndex(pipeline.name), T0, next);
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-prod', ['4.5.0'], T0 + 2000)).toBe(next);
  });

  it('a rollout open longer than every step stage could stall takes no child', async () => {
    const appSet = fresh();
    const id = await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', [sha('6a')], T0);
    const window = 3 * config.settings.stallAfterMinutes * 60_000;
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-staging', [sha('6b')], T0 + window)).toBe(id);
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-prod', ['4.6.0'], T0 + window + 1)).not.toBe(id);
  });

  it('CI announced the commit first: the rollout it opens is CI\'s release; announced later, the commit finds the rollout', async () => {
    const appSet = fresh();
    await rollouts.noteAnnounced(pipeline.name, sha('7a'), 'rel-ci-7');
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', [sha('7a')], T0)).toBe('rel-ci-7');
    expect(await rollouts.rolloutOf(pipeline, appSet, 'checkout-staging', [sha('7b')], T0 + 1)).toBe('rel-ci-7');
    const other = 'prod/argocd/appset:checkout';
    await rollouts.rolloutOf(pipeline, appSet, 'checkout-dev', [sha('8a')], T0 + 2);
    fresh();
    const id = await rollouts.rolloutOf(pipeline, other, 'checkout-dev', [sha('8a')], T0);
    await rollouts.rolloutOf(pipeline, other, 'checkout-prod', ['4.8.0', sha('8c')], T0 + 1);
    expect(await rollouts.releaseOfCommit(pipeline.name, sha('8c'))).toBe(id);
    expect(await rollouts.releaseOfCommit(pipeline.name, sha('8c').slice(0, 12).toUpperCase())).toBe(id);
    // A chart version is no commit: not indexed.
    expect(await rollouts.releaseOfCommit(pipeline.name, '4.8.0')).toBeUndefined();
  });

  it('bounded: the last few rollouts are kept, one field per child each, and the index expires', async () => {
    const appSet = fresh();
    for (let r = 0; r < KEPT_ROLLOUTS + 5; r++) {
      for (const [i, child] of ['checkout-dev', 'checkout-staging', 'checkout-prod'].entries()) await rollouts.rolloutOf(pipeline, appSet, child, [sha(`${r}${i}`)], T0 + r * 10_000 + i);
    }
    const key = keys.appSetRollouts(pipeline.name, appSet);
    // ids, and per kept rollout: when it opened and its three children.
    expect(await redis.hlen(key)).toBe(1 + KEPT_ROLLOUTS * 4);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TTL);
    expect(await redis.pttl(keys.rolloutOfCommit(pipeline.name, sha('00').slice(0, 12)))).toBeGreaterThan(0);
  });
});
