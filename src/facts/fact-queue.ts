/** The "facts" queue: ingest adds, the reducer worker consumes. Job ids are the facts' identities. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Fact } from './fact.js';
import { factIdentity } from './identity.js';

export const FACTS_QUEUE = 'facts';

export class FactQueue {
  readonly queue: Queue<Fact>;

  constructor(
    connection: Redis,
    prefix: string,
    private readonly releaseIdAnnotations: readonly string[],
  ) {
    this.queue = new Queue<Fact>(FACTS_QUEUE, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: 10,
        backoff: { type: 'exponential', delay: 500 },
        // Completed jobs are kept a while so a redelivery of the same notification stays one job.
        removeOnComplete: { age: 600, count: 20_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    });
    // Failures surface through add(); the event would otherwise crash or spam the process.
    this.queue.on('error', () => undefined);
  }

  /** Resolves once the job is in Redis; a repeated identity is absorbed by BullMQ. */
  async add(fact: Fact): Promise<string> {
    const jobId = factIdentity(fact, this.releaseIdAnnotations);
    await this.queue.add(fact.kind, fact, { jobId });
    return jobId;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
