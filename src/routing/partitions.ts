/**
 * Which fact partition a fact goes to. Facts of one pipeline always land in the same partition
 * (a stable hash of the pipeline's name), so the replica holding that partition's lease is the
 * only one reducing the pipeline's releases, and a redelivered fact meets its first delivery's
 * job id in the same queue. A cluster fact names no pipeline: ingest routes it with the config
 * alone (the reducer's own rule), and one that matches no stage directly (an Application seen
 * only through the Rollouts it manages) goes by its cluster and namespace; the reducer forwards
 * it to its pipeline's partition once the target index names the pipeline.
 */
import { createHash } from 'node:crypto';
import type { ConfigFile } from '../config/file.js';
import { routeFact } from './route.js';
import { pipelinesOfAppSet } from './route-appset.js';
import type { Fact } from '../facts/fact.js';
import type { FactPartitioner } from '../facts/fact-queue.js';

/** Stable across processes and releases: the first 32 bits of SHA-256, modulo K. */
export function partitionOfKey(key: string, partitions: number): number {
  if (partitions <= 1) return 0;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % partitions;
}

export function partitionOfPipeline(pipeline: string, partitions: number): number {
  return partitionOfKey(`pipeline\n${pipeline}`, partitions);
}

/** What a fact is partitioned by: its pipeline when the fact or the config names one, else its cluster/namespace. */
export function partitionKeyOfFact(config: ConfigFile, fact: Fact): { pipeline: string } | { namespace: string } {
  switch (fact.kind) {
    case 'release':
    case 'watchdog':
    case 'superseded':
    case 'rejection':
      return { pipeline: fact.pipeline };
    case 'rollout':
    case 'application':
    case 'kargo-stage':
    case 'kargo-promotion':
    case 'kargo-freight': {
      const first = routeFact(config, fact)[0];
      if (first) return { pipeline: first.pipeline.name };
      return fact.kind === 'kargo-freight' ? { namespace: `${fact.cluster}/${fact.namespace}` } : { namespace: `${fact.target.cluster}/${fact.target.namespace}` };
    }
    case 'application-set': {
      const first = pipelinesOfAppSet(config, fact.target)[0];
      return first ? { pipeline: first.name } : { namespace: `${fact.target.cluster}/${fact.target.namespace}` };
    }
  }
}

export function partitionOfFact(config: ConfigFile, fact: Fact, partitions: number): number {
  if (partitions <= 1) return 0;
  const by = partitionKeyOfFact(config, fact);
  return 'pipeline' in by ? partitionOfPipeline(by.pipeline, partitions) : partitionOfKey(`namespace\n${by.namespace}`, partitions);
}

/** The facts queue's partitioner for `config` (read at each fact: a reload's pipelines route the next one). */
export function factPartitioner(config: ConfigFile, partitions: number): FactPartitioner {
  return { ofFact: (fact) => partitionOfFact(config, fact, partitions), ofPipeline: (pipeline) => partitionOfPipeline(pipeline, partitions) };
}
