/** The BullMQ Worker of one fact partition: hands each job's facts to the reducer under the partition's fence. */
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { FactClaims, type FactJobData } from '../../facts/fact-batches.js';
import { FACTS_QUEUE } from '../../facts/fact-queue.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { Keys } from '../../store/keys.js';
import { FencedWriteError, type Fence } from '../store/fence.js';
import type { FactReducer } from './reducer-worker.js';

/**
 * Facts a job counts for against REDUCER_CONCURRENCY. A job carries up to FACTS_PER_JOB (128)
 * facts, but only a backlog fills it; a job counted as 16 keeps a few in hand at a time, more than
 * one, so a batch that waits on a slow read does not stop the others (64 jobs at 1,024).
 */
const FACTS_COUNTED_PER_JOB = 16;

/** Jobs a Worker holds at once for a given number of facts in hand (REDUCER_CONCURRENCY). */
export function jobConcurrencyOf(factsInHand: number): number {
  return Math.max(1, Math.ceil(factsInHand / FACTS_COUNTED_PER_JOB));
}

export function startReducerWorker(
  reducer: FactReducer,
  options: { connection: Redis; keys: Keys; metrics: Metrics; concurrency: number; logger: Logger; lockDurationMs?: number; partition?: number; fence?: Fence },
): Worker<FactJobData> {
  const partition = options.partition ?? 0;
  const fence = options.fence ? { fence: options.fence } : {};
  const claims = new FactClaims(options.connection, options.keys);
  const processJob = async (job: Job<FactJobData>) => {
    const { mine, repeats } = await claims.claim(partition, job);
    for (const repeat of repeats) options.metrics.factsRepeated.inc({ source: repeat.fact.source });
    // Every fact settles before the job does: a retry never races an attempt still at work.
    const settled = await Promise.allSettled(mine.map((q) => reducer.process(q.fact, { partition, ...(q.pipeline !== undefined ? { pipeline: q.pipeline } : {}), ...fence })));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return { reduced: mine.length, repeats: repeats.length };
  };
  const worker = new Worker<FactJobData>(FACTS_QUEUE, processJob, {
    connection: options.connection,
    prefix: options.keys.factQueuePrefix(partition),
    concurrency: jobConcurrencyOf(options.concurrency),
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.lockDurationMs ?? 30_000,
    // A fact whose worker died twice is still retried: the reducer is idempotent.
    maxStalledCount: 3,
  });
  worker.on('failed', (job, err) => {
    // Already told at warn by the reducer; the partition's new holder retries the job.
    if (err instanceof FencedWriteError) return;
    options.logger.warn({ partition, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'facts failed; BullMQ retries the job (the reducer is idempotent)');
  });
  worker.on('error', (err) => options.logger.error({ err }, 'reducer worker error'));
  return worker;
}
