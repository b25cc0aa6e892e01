/**
 * A reducer process stopped (SIGSTOP) with jobs of a release in hand, past its partition lease
 * and job locks: a survivor takes the partition over and reduces the facts; the stopped process
 * is continued, and its write of the record is refused by the fence (issue 20, the zombie).
 */
import { forkGlidepathChild, type GlidepathChild } from '../helpers/child-glidepath.js';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { createKeys } from '../../src/store/keys.js';
import { testConfig } from '../helpers/pipeline.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { fixture } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = fileURLToPath(new URL('../fixtures/reducer-child.ts', import.meta.url));

type Child = GlidepathChild;
const startChild = (env: Record<string, string>): Promise<Child> => forkGlidepathChild(CHILD, env);

/** The paused fixture moved on: resumed to the next step, a newer resourceVersion. */
function resumed(): Record<string, any> {
  const body = fixture('paused');
  const r = body.rollout;
  r.metadata.resourceVersion = String(Number(r.metadata.resourceVersion) + 5);
  r.status.currentStepIndex = Number(r.status.currentStepIndex ?? 1) + 1;
  r.status.phase = 'Progressing';
  r.status.message = 'more replicas need to be updated';
  delete r.status.pauseConditions;
  delete r.status.controllerPause;
  body.sentAt = Number(body.sentAt ?? 0) + 5;
  return body;
}

describe('a reducer stopped past its lease (the zombie)', () => {
  const env = testEnv({ JOB_LOCK_MS: '1000' });
  const childEnv = {
    PORT: '0', REDIS_URL: env.REDIS_URL, REDIS_PREFIX: env.REDIS_PREFIX, LOG_LEVEL: 'warn', JOB_LOCK_MS: '1000', PARTITION_LEASE_MS: '1000',
    INGEST_TOKENS: 'prod=prod-token-0123456789abcdef',
  };
  const redis = new Redis(env.REDIS_URL);
  const keys = createKeys(env.REDIS_PREFIX);
  let ingest: Glidepath;
  const children: Child[] = [];

  afterAll(async () => {
    for (const c of children) {
      c.process.kill('SIGCONT');
      c.process.kill('SIGKILL');
    }
    await ingest?.close();
    await dropPrefix(env.REDIS_PREFIX);
    redis.disconnect();
  });

  it('wakes to find its partition taken: its record write is refused and counted, the record keeps the survivor\'s result, and it dispatches nothing more', async () => {
    ingest = await startTestGlidepath(testConfig(), env, { workers: false });
    const zombie = await startChild({ ...childEnv, HANG: 'wait', CHILD_NAME: 'zombie' });
    children.push(zombie);

    // The zombie saves the paused fact and waits in its delivery; the resume queues behind it in the release's lane.
    expect((await postJson(`${ingest.url}/v1/facts/rollouts`, fixture('paused'))).status).toBe(202);
    await waitFor(async () => (await redis.lrange(`${env.REDIS_PREFIX}:test:entered`, 0, -1)).includes('zombie:rel-4') || undefined, 'the zombie inside its first delivery');
    expect((await postJson(`${ingest.url}/v1/facts/rollouts`, resumed())).status).toBe(202);
    await waitFor(async () => ((await ingest.facts.counts('waiting', 'prioritized')).waiting ?? 0) === 0 || undefined, 'the zombie took the second job too');
    const epochBefore = Number(await redis.get(keys.partitionLeaseEpoch(0)));
    zombie.process.kill('SIGSTOP');

    // A survivor takes the partition over (the lease expires), and the stalled jobs with it.
    const survivor = await startChild({ ...childEnv, HANG: '0', CHILD_NAME: 'survivor' });
    children.push(survivor);
    const done = await waitFor(async () => {
      const saved = await ingest.store.load('checkout', 'rel-4');
      return saved && saved.outbox.length === 0 && saved.record.stages.find((s) => s.name === 'prod')?.status !== 'Paused' ? saved : undefined;
    }, 'the survivor to reduce the resume', 30_000);
    expect(Number(await redis.get(keys.partitionLeaseEpoch(0)))).toBeGreaterThan(epochBefore);
    const survivorVersion = done.record.version;
    const deliveredBefore = await redis.lrange(`${env.REDIS_PREFIX}:test:delivered`, 0, -1);
    expect(deliveredBefore.some((id) => id.startsWith('survivor:'))).toBe(true);

    // The zombie wakes: its first delivery finishes, and its next batch (the resume) reaches the store.
    await redis.set(`${env.REDIS_PREFIX}:test:go`, '1');
    zombie.process.kill('SIGCONT');
    const fenced = await waitFor(async () => zombie.lines.find((l) => l.includes('fenced')), 'the zombie to log a fenced write', 30_000);
    const line = JSON.parse(fenced) as { level: number; what: string; msg: string };
    expect(line.level).toBe(40); // warn
    expect(line.what).toBe('record');

    const after = await ingest.store.load('checkout', 'rel-4');
    expect(after?.record.version).toBe(survivorVersion);
    expect(after?.record.counters.facts).toBe(done.record.counters.facts);
    // Whatever the zombie had in flight when it stopped was the paused reply the survivor delivered too; nothing of the resume.
    const zombieDelivered = (await redis.lrange(`${env.REDIS_PREFIX}:test:delivered`, 0, -1)).filter((id) => id.startsWith('zombie:'));
    expect(zombieDelivered.every((id) => deliveredBefore.includes(id.replace(/^zombie:/, 'survivor:')))).toBe(true);
    expect(zombieDelivered.filter((id) => id.includes(':resumed:'))).toEqual([]);
  });
});
