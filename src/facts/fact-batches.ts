/**
 * Facts travel the facts queues in batches: one BullMQ job carries the facts ingest queued for a
 * partition in one turn of the event loop (up to FACTS_PER_JOB). BullMQ's own work per job (the
 * add, the moves to active and to completed, their events) was most of what a fact cost Redis
 * with a job each (bench:ingest: 2.4 scripts and 186 µs of Redis time per fact); a batch pays it
 * once. A quiet fleet still makes jobs of one fact.
 *
 * A batch cannot be deduplicated by its job id as a job of one fact was, so each fact's identity
 * is claimed when a worker takes the batch: the first job to claim an identity within
 * FACT_DEDUPE_MS reduces it, and keeps it when retried (the claim holds the job's id); the same
 * observation in any other job is a repeat. Ingest's backpressure counts facts, not jobs: each
 * partition keeps a count of facts added and not yet taken, which a batch leaves once.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../store/keys.js';
import type { Fact } from './fact.js';

/** Job name of a batch of facts. */
export const FACT_BATCH_JOB = 'facts';
/** The most facts one job carries. */
export const FACTS_PER_JOB = 128;
/**
 * How long a fact's identity deduplicates redeliveries: the same notification sent again, or
 * the same object version heard from the watch and from a webhook.
 */
export const FACT_DEDUPE_MS = 10 * 60_000;

/** One fact of a batch: its identity, and for a fact forwarded from another partition the one pipeline it is for. */
export interface QueuedFact {
  id: string;
  fact: Fact;
  pipeline?: string;
}
export interface FactBatch {
  facts: QueuedFact[];
}

/** Job name of a forwarded fact queued before batches (one job per fact). */
export const FORWARDED_JOB = 'forwarded';
/** A forwarded fact as queued before batches. */
export interface ForwardedFact {
  fact: Fact;
  pipeline: string;
}
/**
 * A facts job: a batch, or one fact as replicas before batches queued it (named after its
 * kind, or FORWARDED_JOB; BullMQ deduplicated those by job id), still taken during an upgrade.
 */
export type FactJobData = FactBatch | Fact | ForwardedFact;

/** A facts job as BullMQ hands it over (or lists it). */
export interface FactJobLike {
  name: string;
  id?: string | undefined;
  data: FactJobData;
}

/** The facts a job carries, in the order they were queued. */
export function factsOfJob(job: FactJobLike): QueuedFact[] {
  if (job.name === FACT_BATCH_JOB) return (job.data as FactBatch).facts;
  const id = job.id ?? '';
  if (job.name === FORWARDED_JOB) {
    const { fact, pipeline } = job.data as ForwardedFact;
    return [{ id, fact, pipeline }];
  }
  return [{ id, fact: job.data as Fact }];
}

/**
 * KEYS[1] the partition's count of waiting facts, KEYS[2] the job's taken marker, KEYS[3..] the
 * identities' claims; ARGV[1] the job id, ARGV[2] the claims' TTL (ms), ARGV[3] the facts in the
 * job. Returns a flag per identity: 1 when it is this job's to reduce (the first time it is in the job).
 */
const CLAIM = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then redis.call('DECRBY', KEYS[1], ARGV[3]) end
local mine, here = {}, {}
for i = 3, #KEYS do
  local own = not here[KEYS[i]] and (redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) or redis.call('GET', KEYS[i]) == ARGV[1])
  here[KEYS[i]] = true
  if own then mine[i - 2] = 1 else mine[i - 2] = 0 end
end
return mine
`;

type ClaimingRedis = Redis & { glidepathClaimFacts(numberOfKeys: number, ...args: string[]): Promise<number[]> };

/** The worker's side of a batch: which of its facts are its own to reduce. */
export class FactClaims {
  private readonly redis: ClaimingRedis;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    if (!('glidepathClaimFacts' in redis)) redis.defineCommand('glidepathClaimFacts', { lua: CLAIM });
    this.redis = redis as ClaimingRedis;
  }

  /**
   * The facts of a batch job this job is the first to carry (all of them again when the job is
   * retried), and the repeats (the same observation in another job within FACT_DEDUPE_MS); the
   * job's facts leave its partition's waiting count, once. Jobs queued before batches were
   * deduplicated by BullMQ and counted as jobs: all theirs, nothing to claim.
   */
  async claim(partition: number, job: FactJobLike): Promise<{ mine: QueuedFact[]; repeats: QueuedFact[] }> {
    const facts = factsOfJob(job);
    if (job.name !== FACT_BATCH_JOB || job.id === undefined) return { mine: facts, repeats: [] };
    const jobId = job.id;
    const keys = [this.keys.factsWaiting(partition), this.keys.factJobTaken(partition, jobId), ...facts.map((f) => this.keys.factSeen(partition, f.id))];
    const flags = await this.redis.glidepathClaimFacts(keys.length, ...keys, jobId, String(FACT_DEDUPE_MS), String(facts.length));
    const mine: QueuedFact[] = [];
    const repeats: QueuedFact[] = [];
    facts.forEach((f, i) => (flags[i] === 1 ? mine : repeats).push(f));
    return { mine, repeats };
  }
}

/**
 * Facts waiting in one partition: its count, never fewer than one per waiting job. The count can
 * drift: low when an add's raise was lost (ingest died between the two) or a job was taken again
 * after its marker expired; high when a waiting job was removed untaken (a drained queue). With no
 * job waiting it is set back to 0, so no drift outlives the next time the reducers catch up. That
 * reset can race an add between the job count and the reset, and then reads low, never high.
 */
export async function waitingFactsOf(redis: Redis, keys: Keys, partition: number, waitingJobs: number): Promise<number> {
  const key = keys.factsWaiting(partition);
  const counted = Number((await redis.get(key)) ?? 0);
  if (waitingJobs > 0) return Math.max(waitingJobs, counted);
  if (counted !== 0) await redis.set(key, 0);
  return 0;
}
