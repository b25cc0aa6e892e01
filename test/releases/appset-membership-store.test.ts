/**
 * The ApplicationSet state kept beside the release records (appset-memberships.ts), on the real
 * Redis (the chunk-count check on a redis-server of its own, watched with MONITOR): written in member chunks, a status write sends the chunks that changed, and whatever was
 * written reads back as the state the fact carried, in another process too; a hash written with
 * the members in `state` (before the chunks) still reads back.
 */
import { redisClient } from '../helpers/slack-harness.js';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { targetKey, type ApplicationSetFact } from '../../src/facts/fact.js';
import { appSetStateOf } from '../../src/releases/reduce/appset-known.js';
import { AppSetMemberships } from '../../src/releases/store/appset-memberships.js';
import { createKeys } from '../../src/store/keys.js';
import { factOf, type MemberState } from '../helpers/appset-world.js';
import { dropPrefix, uniquePrefix } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { OwnRedis } from '../helpers/redis-server.js';

const config = testConfig(`
  - name: checkout-appset
    channel: C0123APPSET
    stages:
      - { name: one, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 1 } }
      - { name: two, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 2 } }
`);
const pipeline = config.pipelines.find((p) => p.name === 'checkout-appset')!;
const prefix = uniquePrefix();
const redis = redisClient();
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(prefix);
});

const REV = 'c0ffee1234567890abcdef1234567890abcdef12';
const names = Array.from({ length: 600 }, (_, i) => `child-${String(i).padStart(4, '0')}`);

function factAt(rv: number, moved: number): ApplicationSetFact {
  const members: Record<string, MemberState & { step: number }> = {};
  names.forEach((n, i) => {
    members[n] = { status: i < moved ? 'Healthy' : 'Waiting', targetRevisions: [REV], step: i < 300 ? 1 : 2, lastTransitionTime: '2026-08-20T09:00:00Z' };
  });
  return factOf({ kind: 'appset', rv, members }, Date.parse('2026-08-20T09:00:00Z') + rv) as ApplicationSetFact;
}

describe('the ApplicationSet membership hash', () => {
  it('status writes moving a few children rewrite a few chunks, and every write reads back as the fact said, here and in another process', async () => {
    // On a redis-server of its own: MONITOR on the shared one sees every other test's commands,
    // and lines still arriving as it disconnects throw in ioredis ("Command queue state error").
    const own = await OwnRedis.start();
    const redis = new Redis(own.url);
    onTestFinished(async () => {
      redis.disconnect();
      await own.stop();
    });
    const keys = createKeys(prefix);
    const writer = new AppSetMemberships(redis, keys, 60_000);
    const key = keys.appSetMembership(pipeline.name, targetKey(factAt(1, 0).target));
    let rv = 10;
    for (const moved of [0, 20, 40, 41, 300, 600]) {
      const fact = factAt(rv++, moved);
      await writer.note(config, fact);
      const here = (await writer.of(pipeline))?.[targetKey(fact.target)];
      const there = (await new AppSetMemberships(redis, keys, 60_000).of(pipeline))?.[targetKey(fact.target)];
      expect(here).toEqual(appSetStateOf(fact));
      expect(there).toEqual(appSetStateOf(fact));
      expect(Object.keys(there?.members ?? {})).toEqual(Object.keys(appSetStateOf(fact).members));
    }
    const chunks = Number(await redis.hget(key, 'n'));
    expect(chunks).toBeGreaterThan(3);
    // A write moving 20 children changes few of the chunks: watch what it sends.
    const sent: string[][] = [];
    const monitor = await redis.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'eval' && args[3] === key) sent.push(args);
    });
    // The monitor sees commands from the next one on.
    await redis.ping();
    await writer.note(config, factAt(rv, 580));
    await writer.of(pipeline);
    monitor.disconnect();
    expect(sent).toHaveLength(1);
    // eval, script, key count, key, six arguments, then index/JSON pairs.
    const pairs = (sent[0]!.length - 10) / 2;
    expect(pairs).toBeGreaterThan(0);
    expect(pairs).toBeLessThan(chunks);
  });

  it('a hash written with the members in its state reads back', async () => {
    const keys = createKeys(`${prefix}-old`);
    const fact = factAt(5, 100);
    const state = appSetStateOf(fact);
    const key = keys.appSetMembership(pipeline.name, targetKey(fact.target));
    await redis.hset(key, 'v', JSON.stringify({ uid: state.uid, generation: state.generation, resourceVersion: state.resourceVersion, heardAt: state.heardAt }), 'state', JSON.stringify(state));
    const memberships = new AppSetMemberships(redis, keys, 60_000);
    expect((await memberships.of(pipeline))?.[targetKey(fact.target)]).toEqual(state);
    // The next write rewrites it in chunks.
    const next = factAt(6, 200);
    await memberships.note(config, next);
    expect((await new AppSetMemberships(redis, keys, 60_000).of(pipeline))?.[targetKey(next.target)]).toEqual(appSetStateOf(next));
    expect(await redis.hget(key, 'n')).not.toBeNull();
    await redis.del(key);
  });
});
