/**
 * The reducer's BullMQ Workers, one per fact partition this replica holds a lease on: started
 * when a lease is taken, closed (jobs in hand finished) before a lease is given back.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FactJobData } from '../../facts/fact-batches.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { Keys } from '../../store/keys.js';
import { PartitionLeases, type PartitionStatus } from './partition-leases.js';
import type { FactReducer } from './reducer-worker.js';
import { startReducerWorker } from './reducer-jobs.js';

export interface PartitionWorkersOptions {
  connection: Redis;
  keys: Keys;
  reducer: FactReducer;
  metrics: Metrics;
  concurrency: number;
  logger: Logger;
  leaseMs: number;
  lockDurationMs?: number;
  /** Default: host name and a random suffix (a restarted pod is a new replica). */
  replicaId?: string;
  onHeldChange?: (held: number[]) => void;
}

export class PartitionWorkers {
  private readonly running = new Map<number, Worker<FactJobData>>();
  readonly leases: PartitionLeases;

  private constructor(private readonly o: PartitionWorkersOptions) {
    const replicaId = o.replicaId ?? `${hostname()}-${randomBytes(4).toString('hex')}`;
    this.leases = new PartitionLeases(o.connection, o.keys, replicaId, o.leaseMs, {
      acquired: (p, epoch) => {
        const concurrency = Math.max(1, Math.ceil(o.concurrency / Math.max(1, this.leases.status().target)));
        // A Worker per holding: its jobs carry the epoch the lease was taken at (the fence).
        const fence = { epoch, holds: () => this.leases.holds(p, epoch) };
        this.running.set(p, startReducerWorker(o.reducer, { connection: o.connection, keys: o.keys, metrics: o.metrics, concurrency, logger: o.logger, partition: p, fence, ...(o.lockDurationMs ? { lockDurationMs: o.lockDurationMs } : {}) }));
        o.logger.info({ partition: p, replica: replicaId, epoch }, 'fact partition taken');
        this.changed();
      },
      release: async (p) => {
        const worker = this.running.get(p);
        await worker?.close();
        this.running.delete(p);
        o.logger.info({ partition: p, replica: replicaId }, 'fact partition handed over');
        this.changed();
      },
      lost: (p) => {
        const worker = this.running.get(p);
        this.running.delete(p);
        // Another replica may hold it already: stop taking jobs now (the ones in hand finish).
        void worker?.close();
        o.logger.warn({ partition: p, replica: replicaId }, 'fact partition lease lost');
        this.changed();
      },
    });
  }

  static async start(o: PartitionWorkersOptions): Promise<PartitionWorkers> {
    const workers = new PartitionWorkers(o);
    await workers.leases.start();
    return workers;
  }

  private changed(): void {
    this.o.onHeldChange?.([...this.running.keys()].sort((a, b) => a - b));
  }

  /** The Workers of the partitions held now. */
  workers(): Worker<FactJobData>[] {
    return [...this.running.values()];
  }

  status(): PartitionStatus {
    return this.leases.status();
  }

  healthy(): { ok: boolean; reason?: string } {
    return this.leases.healthy();
  }

  /** Finishes the jobs in hand, gives every lease back, leaves the live set. */
  async close(): Promise<void> {
    await this.leases.stop();
  }
}
