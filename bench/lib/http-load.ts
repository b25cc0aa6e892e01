/** A small HTTP load generator: closed and open loops over keep-alive connections (bench/lib/http-raw.ts). */
import { RawPool } from './http-raw.js';

export interface LoadResult {
  latenciesMs: number[];
  statuses: Map<number, number>;
  elapsedMs: number;
  /** Closed loop: answers 503 with Retry-After (ingest's backpressure) that were sent again after the wait. */
  refused: number;
}

/**
 * Closed loop: `concurrency` requests in flight until all bodies are sent. A 503 with
 * Retry-After is sent again after that wait, as Argo's notification engines retry a 5xx; its
 * latency is the accepted answer's, counted from the first try.
 */
export async function closedLoop(url: string, bodies: Buffer[], token: string, concurrency: number): Promise<LoadResult> {
  const pool = new RawPool(new URL(url), token, concurrency);
  const latenciesMs: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++] as Buffer;
        const t = performance.now();
        let answer = await pool.post(body);
        while (answer.retryAfter !== undefined) {
          refused++;
          await new Promise((r) => setTimeout(r, (answer.retryAfter as number) * 1000));
          answer = await pool.post(body);
        }
        latenciesMs.push(performance.now() - t);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
    }),
  );
  pool.close();
  return { latenciesMs, statuses, elapsedMs: performance.now() - started, refused };
}

/** Open loop: requests start at a fixed rate whatever the answers do (latency under a given offered load). */
export async function openLoop(url: string, bodies: Buffer[], token: string, perSecond: number): Promise<LoadResult> {
  const pool = new RawPool(new URL(url), token, 256);
  const latenciesMs: number[] = [];
  const statuses = new Map<number, number>();
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < bodies.length; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    inflight.push(
      pool.post(bodies[i] as Buffer).then(({ status }) => {
        latenciesMs.push(performance.now() - t);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    );
  }
  await Promise.all(inflight);
  pool.close();
  return { latenciesMs, statuses, elapsedMs: performance.now() - started, refused: 0 };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
