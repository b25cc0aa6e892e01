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
        // Failed jobs are kept for a week to look into, but never more than this many.
        removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
      },
    });
    // Failures surface through add(); the event would otherwise crash or spam the process.
    this.queue.on('error', () => undefined);
  }

  private pending: { fact: Fact; jobId: string; resolve: (id: string) => void; reject: (err: unknown) => void }[] = [];
  private flushScheduled = false;

  /**
   * Resolves once the job is in Redis; a repeated identity is absorbed by BullMQ. Adds that
   * arrive in the same turn of the event loop go to Redis together (one round trip), which is
   * what lets one ingest process keep up with a burst of notifications.
   */
  add(fact: Fact): Promise<string> {
    const jobId = factIdentity(fact, this.releaseIdAnnotations);
    return new Promise((resolve, reject) => {
      this.pending.push({ fact, jobId, resolve, reject });
      if (this.pending.length >= 128) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.queue
      .addBulk(batch.map((p) => ({ name: p.fact.kind, data: p.fact, opts: { jobId: p.jobId } })))
      .then(
        () => batch.forEach((p) => p.resolve(p.jobId)),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
