/**
 * A process's two handles on the facts queues. Ingest adds on the fail-fast connection (a Redis
 * outage is a 503 the sender retries); the reducer's side works on the connection that retries
 * forever (BullMQ Queues share it, no new sockets). Both partition facts by routing's rule.
 */
import type { ConfigFile } from '../config/file.js';
import { FactQueue } from '../facts/fact-queue.js';
import { releaseIdAnnotationsOf } from '../routing/catalog.js';
import { factPartitioner } from '../routing/partitions.js';
import type { Keys } from '../store/keys.js';
import type { RedisConnections } from './redis.js';

export function openFactQueues(redis: RedisConnections, keys: Keys, config: ConfigFile, keepCompleted: number): { ingestFacts: FactQueue; workFacts: FactQueue } {
  const annotations = releaseIdAnnotationsOf(config);
  const partitioner = factPartitioner(config, keys.partitions);
  return {
    ingestFacts: new FactQueue(redis.requests, keys, annotations, partitioner, keepCompleted),
    workFacts: new FactQueue(redis.workers, keys, annotations, partitioner, keepCompleted),
  };
}
