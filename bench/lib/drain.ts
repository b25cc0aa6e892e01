/** Waits until a BullMQ queue has no job waiting, active, prioritized or delayed (a bench's "all reduced"). */
import type { Queue } from 'bullmq';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function untilDrained(queue: Pick<Queue, 'getJobCounts'>, what: string, timeoutMs: number, states: readonly string[] = ['waiting', 'active', 'prioritized', 'delayed']): Promise<void> {
  const t = performance.now();
  for (;;) {
    const c = await queue.getJobCounts(...(states as Parameters<Queue['getJobCounts']>));
    if (Object.values(c).every((n) => n === 0)) return;
    if (performance.now() - t > timeoutMs) throw new Error(`${what}: not reduced after ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}
