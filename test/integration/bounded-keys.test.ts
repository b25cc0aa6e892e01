/**
 * Redis never grows without bound: after 10,000 releases of every kind (announced only, in
 * progress, failed, complete), with their Slack thread state, announcement claims and audit
 * entries, every key Glidepath wrote has a TTL, or is one of the bounded structures listed
 * here with its bound checked. Facts go straight to the reducer (no HTTP, no queue) to stay fast.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { AnnouncementClaims } from '../../src/facts/announcements.js';
import type { Fact } from '../../src/facts/fact.js';
import { normaliseAnnouncement, normaliseRollout } from '../../src/facts/normalise.js';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { FINISHED_RELEASE_STATUSES } from '../../src/releases/record/record.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import { MAX_EXPIRY_SLACK_MS } from '../../src/store/expiry-refresh.js';
import { dropPrefix, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';

const RELEASES = Number(process.env.BOUNDED_RELEASES ?? 10_000);
const DAY = 86_400_000;
// Twenty pipelines, so that no stage holds thousands of Rollouts (which no real stage does).
const PIPELINES = 20;
const pipelineOf = (i: number) => `bulk-${i % PIPELINES}`;
const BULK = Array.from(
  { length: PIPELINES },
  (_, n) => `
  - name: bulk-${n}
    channel: C0123BULK
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: bulk-${n}, selector: "app=bulk" }
`,
).join('');
const SETTINGS = { auditMaxEntries: 1_000, auditDeniedPerUserPerMinute: 5, unfinishedReleaseTtlDays: 30, finishedReleaseTtlHours: 168 };

function factOf(i: number, now: number): Fact {
  const releaseId = `rel-${i}`;
  if (i % 4 === 3) return normaliseAnnouncement({ releaseId, pipeline: pipelineOf(i), images: [`registry.example.com/bulk:${i}`] }, now);
  const phase = (['Healthy', 'Paused', 'Degraded'] as const)[i % 4]!;
  const body = rolloutBody({
    name: `svc-${i}`,
    namespace: pipelineOf(i),
    uid: `uid-${i}`,
    labels: { app: 'bulk' },
    generation: 2,
    rv: 100 + i,
    releaseId,
    image: `registry.example.com/bulk:${i}`,
    podHash: phase === 'Healthy' ? 'stable' : 'canary',
    stableRS: 'stable',
    phase,
  });
  return normaliseRollout(rolloutFactBody.parse(body), 'prod', now);
}

async function inParallel(count: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) await work(next++);
  }));
}

async function allKeys(app: Glidepath): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [nextCursor, batch] = await app.redis.requests.scan(cursor, 'MATCH', `${app.keys.prefix}*`, 'COUNT', 5_000);
    cursor = nextCursor;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

describe('every key is bounded', () => {
  const env = testEnv();
  const config = testConfig(BULK);
  Object.assign(config.settings, SETTINGS);
  let app: Glidepath;
  beforeAll(async () => {
    // The reducer, called directly: nothing is queued. No target-index read cache: each fact asks the index's version.
    app = await startTestGlidepath(config, env, { roles: ['worker'], tuning: { targetCacheMs: 0 } });
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  // About 50 s alone on this 2-core machine, past 120 s beside the rest of the suite: the timeout is a hang guard, not a speed bound.
  it(`after ${RELEASES} releases every key has a TTL or is a bounded structure`, { timeout: 300_000 }, async () => {
    const redis = app.redis.workers;
    const threads = new ThreadStore(redis, app.keys, SETTINGS.finishedReleaseTtlHours * 3_600_000);
    const claims = new AnnouncementClaims(redis, app.keys, SETTINGS.unfinishedReleaseTtlDays * DAY);
    const now = Date.now();
    await inParallel(RELEASES, 64, async (i) => {
      const fact = factOf(i, now);
      if (fact.kind === 'release') expect((await claims.claim(fact)).kind).toBe('new');
      expect((await app.reducer!.process(fact)).routes).toBe(1);
      // What the Slack writer keeps per release: the thread, one reply, the TTL it sets after a render.
      const record = (await app.store.get(pipelineOf(i), `rel-${i}`))!;
      await threads.saveParent(record.pipeline, record.releaseId, { channel: 'C0123BULK', ts: `${i}.000`, rendered: 'x', version: record.version });
      await threads.markReplied(record.pipeline, record.releaseId, 'reply-1');
      await threads.expireWhenFinished(record.pipeline, record.releaseId, FINISHED_RELEASE_STATUSES.includes(record.status));
    });
    // Someone repeating a denied command, and ordinary traffic.
    for (let i = 0; i < 300; i++) await app.audit.append({ actor: { slackUserId: 'U0SPAMMER' }, action: 'approve', target: 'prod/bulk/svc-1', result: 'denied', reason: 'not allowed' });
    for (let i = 0; i < 1_500; i++) await app.audit.append({ actor: { slackUserId: 'U0ALICE' }, action: 'refresh', target: 'bulk@prod', result: 'done' });

    const statuses = await Promise.all([0, 1, 2, 3].map(async (i) => (await app.store.get(pipelineOf(i), `rel-${i}`))?.status));
    expect(statuses).toEqual(['Complete', 'Paused', 'Failed', 'Announced']);

    const keys = await allKeys(app);
    const p = app.keys.prefix;
    const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
    const untimed = keys.filter((_, i) => ttls[i] === -1);

    // The bounded structures without a TTL of their own, each with its bound:
    const bounded: Record<string, (key: string) => boolean> = {
      // Audit stream: MAXLEN ~ auditMaxEntries (approximate trimming leaves at most one macro node over).
      audit: (k) => k === app.keys.audit(),
      // BullMQ's queues (facts, watchdog): their meta hash and id counter (fixed size), event
      // streams (trimmed by BullMQ), job sets and jobs: one delayed stall check per release, removed
      // when it runs; kept completed and failed jobs capped by count.
      queues: (k) => k.startsWith(`${p}:watchdog:`) || k.startsWith(`${p}:facts:`),
      // The key layout version: one key, for as long as the namespace holds data.
      layout: (k) => k === app.keys.layout(),
    };
    const unexplained = untimed.filter((k) => !Object.values(bounded).some((is) => is(k)));
    expect(unexplained).toEqual([]);

    expect(await redis.xlen(app.keys.audit())).toBeLessThanOrEqual(SETTINGS.auditMaxEntries + 100);
    const spam = (await app.audit.list({ actor: 'U0SPAMMER', limit: 1000 })).length;
    expect(spam).toBeLessThanOrEqual(SETTINGS.auditDeniedPerUserPerMinute);
    const text = await app.metrics.registry.getSingleMetricAsString('glidepath_audit_denied_dropped_total');
    expect(text).toContain(`glidepath_audit_denied_dropped_total ${300 - SETTINGS.auditDeniedPerUserPerMinute}`);

    const delayed = await redis.zcard(`${p}:watchdog:delayed`);
    const watchdogJobs = untimed.filter((k) => /:watchdog:stall-/.test(k)).length;
    expect(watchdogJobs).toBeLessThanOrEqual(delayed);
    expect(delayed).toBeLessThanOrEqual(RELEASES);
    expect(await redis.xlen(`${p}:watchdog:events`)).toBeLessThanOrEqual(10_100);
    const failedCap = (await app.watchdog.queue.opts.defaultJobOptions?.removeOnFail) as { count?: number };
    expect(failedCap.count).toBeGreaterThan(0);
    expect((app.facts.queue.opts.defaultJobOptions?.removeOnFail as { count?: number }).count).toBeGreaterThan(0);

    // TTLs are the configured ones: unfinished releases 30 days after last heard, finished ones 168 h
    // (and at most an hour more: expiries are moved on hourly, not on every fact; expiry-refresh.ts).
    const ttlOf = (id: string) => redis.pttl(app.keys.release(pipelineOf(Number(id.slice(4))), id));
    const unfinishedTtl = await ttlOf('rel-1'); // Paused
    expect(unfinishedTtl).toBeGreaterThan(29 * DAY);
    expect(unfinishedTtl).toBeLessThanOrEqual(30 * DAY + MAX_EXPIRY_SLACK_MS);
    expect(await ttlOf('rel-3')).toBeGreaterThan(29 * DAY); // announced only
    const finishedTtl = await ttlOf('rel-0'); // Complete
    expect(finishedTtl).toBeGreaterThan(0);
    expect(finishedTtl).toBeLessThanOrEqual(168 * 3_600_000 + MAX_EXPIRY_SLACK_MS);
    expect(await redis.pttl(app.keys.slackReplies(pipelineOf(2), 'rel-2'))).toBeGreaterThan(29 * DAY); // Failed: unfinished
    expect(await redis.pttl(app.keys.slackReplies(pipelineOf(0), 'rel-0'))).toBeLessThanOrEqual(168 * 3_600_000);
  });

  it('the per-pipeline index and the target index are trimmed on write', async () => {
    const redis = app.redis.workers;
    const latest = RELEASES + PIPELINES; // lands on bulk-0
    const index = app.keys.releaseIndex(pipelineOf(latest));
    // An entry older than the longest TTL names a record that has expired: the next write drops it.
    await redis.zadd(index, Date.now() - 31 * DAY, 'rel-ancient');
    await redis.hset(app.keys.targetReleases(pipelineOf(latest)), 'prod/bulk-0/gone', JSON.stringify({ stage: 'prod', releaseId: 'rel-ancient', heardAt: Date.now() - 31 * DAY }));
    // Written as every writer of the index writes (another replica, long ago): its version moves on, so readers read it whole again.
    await redis.incr(app.keys.targetReleasesVersion(pipelineOf(latest)));
    await app.reducer!.process(factOf(latest, Date.now()));
    expect(await redis.zscore(index, 'rel-ancient')).toBeNull();
    expect(await redis.zscore(index, `rel-${latest}`)).not.toBeNull();
    expect(await redis.hexists(app.keys.targetReleases(pipelineOf(latest)), 'prod/bulk-0/gone')).toBe(0);
  });
});
