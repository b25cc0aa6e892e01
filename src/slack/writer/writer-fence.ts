/**
 * What a writer job works under, and what it does once it lost it. A writer can be paused (SIGSTOP,
 * a long GC) past the TTL of its job's BullMQ lock, the thread lock or a reply's claim, and wake
 * with a Slack call in hand while another writer has the job or the thread. Slack takes no fencing
 * token, so each is checked just before the call (and the thread's saves check the thread lock
 * in their own script, threads.ts); a write that may have landed anyway is repaired after.
 */
import type { Job, Queue } from 'bullmq';
import { PRIORITY, repairJobId, type SlackJob } from './jobs.js';

/** The writer lost what it worked under: nothing is sent or saved; whoever holds it now does the work. */
export class FencedSlackError extends Error {
  override readonly name = 'FencedSlackError';
}

/**
 * Whether the job's lock is still ours (and extended): BullMQ's own fencing token. No token: a job
 * run outside a Worker (tests). `lockMs` is the Worker's lockDuration: extending by more would let
 * a writer that pauses right after this check keep the job past what the stalled check expects.
 */
export async function jobLockHeld(job: Job<SlackJob>, token: string | undefined, lockMs: number): Promise<boolean> {
  return token === undefined || (await job.extendLock(token, lockMs)) === 1;
}

/** A parent render that edits whatever the digest says, after an edit that may have put an older render over a newer one. */
export async function requestRepair(queue: Queue<SlackJob>, pipeline: string, releaseId: string): Promise<void> {
  await queue.add('parent', { type: 'parent', pipeline, releaseId, force: true }, { jobId: repairJobId(pipeline, releaseId, Date.now()), priority: PRIORITY.parent });
}
