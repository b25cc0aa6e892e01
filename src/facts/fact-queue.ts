/**
 * The "facts" queues, one per fact partition (FACT_PARTITIONS, default 1): ingest adds, the
 * reducer worker holding the partition's lease consumes. Facts travel in batches, each fact
 * under its identity (src/facts/fact-batches.ts).
 */
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';
import type { Fact } from './fact.js';
import { FACT_BATCH_JOB, FACTS_PER_JOB, waitingFactsOf, type FactBatch, type FactJobData, type QueuedFact } from './fact-batches.js';
import { factIdentity } from './identity.js';

export const FACTS_QUEUE = 'facts';

/**
 * Which partition a fact goes to, and a fact forwarded to a pipeline: routing's rule
 * (src/routing/partitions.ts), handed in by the composition root so the queue knows no pipelines.
 */
export interface FactPartitioner {
  ofFact(fact: Fact): number;
  ofPipeline(pipeline: string): number;
}

/** One partition: everything goes to partition 0. */
const SINGLE_PARTITION: FactPartitioner = { ofFact: () => 0, ofPipeline: () => 0 };

export class FactQueue {
  /** One queue per partition, in partition order. */
  readonly queues: Queue<FactJobData>[];

  /** A reloaded config's release-id annotations (a change of release id is a new fact). */
  useReleaseIdAnnotations(annotations: readonly string[]): void {
    this.releaseIdAnnotations = annotations;
  }

  constructor(
    private readonly connection: Redis,
    private readonly keys: Keys,
    private releaseIdAnnotations: readonly string[],
    /** Routes facts to their pipeline's partition; needed only with more than one partition. */
    private readonly partitioner: FactPartitioner = SINGLE_PARTITION,
    /** Completed jobs kept to look at (FACT_JOBS_KEEP_COMPLETED; benchmarks read them for lag). */
    keepCompleted = 200,
  ) {
    this.queues = Array.from({ length: keys.partitions }, (_, p) => {
      const queue = new Queue<FactJobData>(FACTS_QUEUE, {
        connection,
        prefix: keys.factQueuePrefix(p),
        defaultJobOptions: {
          attempts: 10,
          backoff: { type: 'exponential', delay: 500 },
          // A few completed jobs to look at; the identities that deduplicate live in their claims.
          removeOnComplete: { count: keepCompleted },
          // Failed jobs are kept for a week to look into, but never more than this many (each up to FACTS_PER_JOB facts).
          removeOnFail: { age: 7 * 24 * 3600, count: 200 },
        },
      });
      // Failures surface through add(); the event would otherwise crash or spam the process.
      queue.on('error', () => undefined);
      return queue;
    });
  }

  /** The queue of partition 0: the only one with FACT_PARTITIONS=1. */
  get queue(): Queue<FactJobData> {
    return this.queues[0] as Queue<FactJobData>;
  }

  /** Job counts summed over the partitions (jobs, not facts: a job carries up to FACTS_PER_JOB). */
  async counts(...states: Parameters<Queue['getJobCounts']>): Promise<Record<string, number>> {
    const all = await Promise.all(this.queues.map((q) => q.getJobCounts(...states)));
    const out: Record<string, number> = {};
    for (const counts of all) for (const [state, n] of Object.entries(counts)) out[state] = (out[state] ?? 0) + n;
    return out;
  }

  /** Facts waiting for a reducer, over the partitions (what ingest's backpressure bounds: src/facts/backlog.ts). */
  async waiting(): Promise<number> {
    const counts = await Promise.all(
      this.queues.map(async (q, p) => waitingFactsOf(this.connection, this.keys, p, await q.getJobCountByTypes('waiting', 'prioritized'))),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  partitionOf(fact: Fact): number {
    if (this.keys.partitions > 1 && this.partitioner === SINGLE_PARTITION) throw new Error('FactQueue: more than one partition needs a partitioner to route facts');
    return this.partitioner.ofFact(fact);
  }

  private pending = new Map<number, { queued: QueuedFact; resolve: (id: string) => void; reject: (err: unknown) => void }[]>();
  private pendingCount = 0;
  private flushScheduled = false;

  /**
   * Resolves with the fact's identity once it is in Redis. Facts that arrive in the same turn of
   * the event loop go to Redis together, one job per partition, which is what lets one ingest
   * process keep up with a burst of notifications. A repeated identity is a repeat the worker
   * does not reduce again.
   */
  add(fact: Fact): Promise<string> {
    return this.enqueue(this.partitionOf(fact), { id: factIdentity(fact, this.releaseIdAnnotations), fact });
  }

  /** Hands a fact to the partition of `pipeline`, to be reduced there for that pipeline only. */
  forward(fact: Fact, pipeline: string): Promise<string> {
    const to = createHash('sha256').update(pipeline).digest('hex').slice(0, 16);
    return this.enqueue(this.partitioner.ofPipeline(pipeline), { id: `${factIdentity(fact, this.releaseIdAnnotations)}-to-${to}`, fact, pipeline });
  }

  private enqueue(partition: number, queued: QueuedFact): Promise<string> {
    return new Promise((resolve, reject) => {
      const list = this.pending.get(partition) ?? [];
      list.push({ queued, resolve, reject });
      this.pending.set(partition, list);
      this.pendingCount++;
      if (this.pendingCount >= FACTS_PER_JOB) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batches = this.pending;
    if (this.pendingCount === 0) return;
    this.pending = new Map();
    this.pendingCount = 0;
    for (const [partition, batch] of batches) {
      const data: FactBatch = { facts: batch.map((p) => p.queued) };
      (this.queues[partition] as Queue<FactJobData>).add(FACT_BATCH_JOB, data).then(
        () => {
          // Counted after the add, before anyone is told: a count that misses an add reads low, never high.
          this.connection.incrby(this.keys.factsWaiting(partition), batch.length).catch(() => undefined);
          for (const p of batch) p.resolve(p.queued.id);
        },
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
