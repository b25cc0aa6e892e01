/** The BullMQ Worker of one fact partition: hands each job to the reducer under the partition's fence. */
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Fact } from '../../facts/fact.js';
import { FACTS_QUEUE, FORWARDED_JOB, type FactJobData, type ForwardedFact } from '../../facts/fact-queue.js';
import type { Logger } from '../../obs/logger.js';
import { FencedWriteError, type Fence } from '../store/fence.js';
import type { FactReducer } from './reducer-worker.js';

export function startReducerWorker(
  reducer: FactReducer,
  options: { connection: Redis; prefix: string; concurrency: number; logger: Logger; lockDurationMs?: number; partition?: number; fence?: Fence },
): Worker<FactJobData> {
  const partition = options.partition ?? 0;
  const fence = options.fence ? { fence: options.fence } : {};
  const processJob = (job: Job<FactJobData>) => {
    if (job.name === FORWARDED_JOB) {
      const { fact, pipeline } = job.data as ForwardedFact;
      return reducer.process(fact, { partition, pipeline, ...fence });
    }
    return reducer.process(job.data as Fact, { partition, ...fence });
  };
  const worker = new Worker<FactJobData>(FACTS_QUEUE, processJob, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.lockDurationMs ?? 30_000,
    // A fact whose worker died twice is still retried: the reducer is idempotent.
    maxStalledCount: 3,
  });
  worker.on('failed', (job, err) => {
    // Already told at warn by the reducer; the partition's new holder retries the job.
    if (err instanceof FencedWriteError) return;
    options.logger.warn({ partition, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'fact failed; BullMQ retries it');
  });
  worker.on('error', (err) => options.logger.error({ err }, 'reducer worker error'));
  return worker;
}
