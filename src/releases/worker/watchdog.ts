/**
 * The stall watchdog: one delayed job per release, due N minutes after it was last heard from.
 * When it fires it looks at the record: heard since → it re-arms itself for the new due time;
 * silent → it hands a watchdog fact to the reducer, which raises the stall alert once. No loop
 * ever scans all releases. The same queue carries due-time re-evaluations (`recheck` jobs,
 * src/releases/reduce/recheck.ts).
 */
import { createHash } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../../obs/logger.js';
import type { FactQueue } from '../../facts/fact-queue.js';
import { expectsProgress } from '../reduce/derive.js';
import type { ReleaseReader } from '../store/ports.js';

export const WATCHDOG_QUEUE = 'watchdog';

export interface WatchdogJob {
  pipeline: string;
  releaseId: string;
  dueAt: number;
}

function jobId(pipeline: string, releaseId: string, dueAt: number, kind: 'stall' | 'recheck' = 'stall'): string {
  const release = createHash('sha256').update(`${pipeline}\n${releaseId}`).digest('hex').slice(0, 24);
  return `${kind}-${release}-${dueAt}`;
}

/** Job name of a due-time re-evaluation (src/releases/reduce/recheck.ts); stall checks are named `check`. */
export const RECHECK_JOB = 'recheck';

export class Watchdog {
  readonly queue: Queue<WatchdogJob>;

  constructor(connection: Redis, prefix: string) {
    this.queue = new Queue<WatchdogJob>(WATCHDOG_QUEUE, {
      connection,
      prefix,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: { age: 24 * 3600, count: 1_000 }, attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
    });
    this.queue.on('error', () => undefined);
  }

  /** Due times are deterministic, so arming twice for the same moment is one job. */
  async arm(pipeline: string, releaseId: string, dueAt: number, now = Date.now()): Promise<void> {
    await this.queue.add('check', { pipeline, releaseId, dueAt }, { jobId: jobId(pipeline, releaseId, dueAt), delay: Math.max(0, dueAt - now) });
  }

  /** The release is reduced again at `dueAt` (a grace ends); one job per release and due time. */
  async recheck(pipeline: string, releaseId: string, dueAt: number, now = Date.now()): Promise<void> {
    await this.queue.add(RECHECK_JOB, { pipeline, releaseId, dueAt }, { jobId: jobId(pipeline, releaseId, dueAt, 'recheck'), delay: Math.max(0, dueAt - now) });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export interface WatchdogWorkerDeps {
  connection: Redis;
  prefix: string;
  releases: ReleaseReader;
  watchdog: Watchdog;
  facts: FactQueue;
  stallAfterMs: (pipeline: string) => number;
  logger: Logger;
  now?: () => number;
}

export async function checkRelease(job: WatchdogJob, deps: WatchdogWorkerDeps): Promise<'gone' | 'done' | 're-armed' | 'stalled'> {
  const now = (deps.now ?? Date.now)();
  const record = await deps.releases.get(job.pipeline, job.releaseId);
  if (!record) return 'gone';
  if (!expectsProgress(record.status) || record.stall) return 'done';
  const dueAt = record.lastHeardAt + deps.stallAfterMs(job.pipeline);
  if (dueAt > now) {
    await deps.watchdog.arm(job.pipeline, job.releaseId, dueAt, now);
    return 're-armed';
  }
  await deps.facts.add({
    kind: 'watchdog',
    source: 'watchdog',
    receivedAt: now,
    pipeline: job.pipeline,
    releaseId: job.releaseId,
    silentSince: record.lastHeardAt,
  });
  deps.logger.warn({ pipeline: job.pipeline, releaseId: job.releaseId, silentSince: new Date(record.lastHeardAt).toISOString() }, 'release stalled');
  return 'stalled';
}

/** A due time the reducer asked for: the reducer gets a watchdog fact marked `recheck` for that time. */
export async function recheckRelease(job: WatchdogJob, deps: Pick<WatchdogWorkerDeps, 'facts' | 'now'>): Promise<'rechecked'> {
  const now = (deps.now ?? Date.now)();
  await deps.facts.add({ kind: 'watchdog', source: 'watchdog', receivedAt: Math.max(now, job.dueAt), pipeline: job.pipeline, releaseId: job.releaseId, silentSince: job.dueAt, recheck: true });
  return 'rechecked';
}

export function startWatchdogWorker(deps: WatchdogWorkerDeps): Worker<WatchdogJob> {
  const run = (job: Job<WatchdogJob>) => (job.name === RECHECK_JOB ? recheckRelease(job.data, deps) : checkRelease(job.data, deps));
  const worker = new Worker<WatchdogJob>(WATCHDOG_QUEUE, run, {
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: 4,
  });
  worker.on('error', (err) => deps.logger.error({ err }, 'watchdog worker error'));
  return worker;
}
