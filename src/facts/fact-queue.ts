/**
 * The "facts" queues, one per fact partition (FACT_PARTITIONS, default 1): ingest adds, the
 * reducer worker holding the partition's lease consumes. Job ids are the facts' identities.
 */
import { createHash } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';
import type { Fact } from './fact.js';
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

/** A fact the reducer of another partition found to belong to this partition's pipeline. */
export interface ForwardedFact {
  fact: Fact;
  pipeline: string;
}
/** Job name of a forwarded fact; other jobs are named after their fact's kind. */
export const FORWARDED_JOB = 'forwarded';
export type FactJobData = Fact | ForwardedFact;

/**
 * How long a fact's identity deduplicates redeliveries once its job is gone. Completed jobs are
 * not kept for that (a job hash is ~2 KB; 20,000 facts kept 10 minutes were most of Redis'
 * memory): BullMQ's deduplication key, a short string with this TTL, holds the identity instead.
 */
export const FACT_DEDUPE_MS = 10 * 60_000;

export class FactQueue {
  /** One queue per partition, in partition order. */
  readonly queues: Queue<FactJobData>[];

  /** A reloaded config's release-id annotations (a change of release id is a new fact). */
  useReleaseIdAnnotations(annotations: readonly string[]): void {
    this.releaseIdAnnotations = annotations;
  }

  constructor(
    connection: Redis,
    private readonly keys: Keys,
    private releaseIdAnnotations: readonly string[],
    /** Routes facts to their pipeline's partition; needed only with more than one partition. */
    private readonly partitioner: FactPartitioner = SINGLE_PARTITION,
    /** Completed jobs kept to look at (FACT_JOBS_KEEP_COMPLETED; benchmarks read them for lag). */
    keepCompleted = 1_000,
  ) {
    this.queues = Array.from({ length: keys.partitions }, (_, p) => {
      const queue = new Queue<FactJobData>(FACTS_QUEUE, {
        connection,
        prefix: keys.factQueuePrefix(p),
        defaultJobOptions: {
          attempts: 10,
          backoff: { type: 'exponential', delay: 500 },
          // A few completed jobs to look at; the identity that deduplicates lives in the deduplication key.
          removeOnComplete: { count: keepCompleted },
          // Failed jobs are kept for a week to look into, but never more than this many.
          removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
        },
      });
      // Failures surface through add(); the event would otherwise crash or spam the process.
      queue.on('error', () => undefined);
      return queue;
    });
  }

  /**
   * The queue of partition 0: the only one with FACT_PARTITIONS=1, where every job is a plain
   * fact (forwarded facts exist only between partitions).
   */
  get queue(): Queue<Fact> {
    return this.queues[0] as unknown as Queue<Fact>;
  }

  /** Job counts summed over the partitions. */
  async counts(...states: Parameters<Queue['getJobCounts']>): Promise<Record<string, number>> {
    const all = await Promise.all(this.queues.map((q) => q.getJobCounts(...states)));
    const out: Record<string, number> = {};
    for (const counts of all) for (const [state, n] of Object.entries(counts)) out[state] = (out[state] ?? 0) + n;
    return out;
  }

  /** Facts waiting for a reducer, over the partitions (what ingest's backpressure bounds: src/facts/backlog.ts). */
  async waiting(): Promise<number> {
    const counts = await Promise.all(this.queues.map((q) => q.getJobCountByTypes('waiting', 'prioritized')));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  partitionOf(fact: Fact): number {
    if (this.keys.partitions > 1 && this.partitioner === SINGLE_PARTITION) throw new Error('FactQueue: more than one partition needs a partitioner to route facts');
    return this.partitioner.ofFact(fact);
  }

  private pending = new Map<number, { name: string; data: FactJobData; jobId: string; resolve: (id: string) => void; reject: (err: unknown) => void }[]>();
  private pendingCount = 0;
  private flushScheduled = false;

  /**
   * Resolves once the job is in Redis; a repeated identity is absorbed by BullMQ. Adds that
   * arrive in the same turn of the event loop go to Redis together (one round trip per
   * partition), which is what lets one ingest process keep up with a burst of notifications.
   */
  add(fact: Fact): Promise<string> {
    return this.enqueue(this.partitionOf(fact), fact.kind, fact, factIdentity(fact, this.releaseIdAnnotations));
  }

  /** Hands a fact to the partition of `pipeline`, to be reduced there for that pipeline only. */
  forward(fact: Fact, pipeline: string): Promise<string> {
    const to = createHash('sha256').update(pipeline).digest('hex').slice(0, 16);
    return this.enqueue(this.partitioner.ofPipeline(pipeline), FORWARDED_JOB, { fact, pipeline }, `${factIdentity(fact, this.releaseIdAnnotations)}-to-${to}`);
  }

  private enqueue(partition: number, name: string, data: FactJobData, jobId: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const list = this.pending.get(partition) ?? [];
      list.push({ name, data, jobId, resolve, reject });
      this.pending.set(partition, list);
      this.pendingCount++;
      if (this.pendingCount >= 128) this.flush();
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
      const opts = (jobId: string): JobsOptions => ({ jobId, deduplication: { id: jobId, ttl: FACT_DEDUPE_MS } });
      (this.queues[partition] as Queue<FactJobData>)
        .addBulk(batch.map((p) => ({ name: p.name, data: p.data, opts: opts(p.jobId) })))
        .then(
          () => batch.forEach((p) => p.resolve(p.jobId)),
          (err: unknown) => batch.forEach((p) => p.reject(err)),
        );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
