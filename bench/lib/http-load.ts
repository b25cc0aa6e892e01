/** A small HTTP load generator on node:http keep-alive sockets (lighter than fetch on 2 cores). */
import { Agent, request } from 'node:http';

export interface LoadResult {
  latenciesMs: number[];
  statuses: Map<number, number>;
  elapsedMs: number;
  /** Closed loop: answers 503 with Retry-After (ingest's backpressure) that were sent again after the wait. */
  refused: number;
}

interface Answer {
  status: number;
  /** Seconds, from a 503's Retry-After. */
  retryAfter?: number;
}

function post(agent: Agent, url: URL, body: Buffer, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        const retryAfter = Number(res.headers['retry-after']);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ...(res.statusCode === 503 && retryAfter > 0 ? { retryAfter } : {}) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Closed loop: `concurrency` requests in flight until all bodies are sent. A 503 with
 * Retry-After is sent again after that wait, as Argo's notification engines retry a 5xx; its
 * latency is the accepted answer's, counted from the first try.
 */
export async function closedLoop(url: string, bodies: Buffer[], token: string, concurrency: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
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
        let answer = await post(agent, target, body, token);
        while (answer.retryAfter !== undefined) {
          refused++;
          await new Promise((r) => setTimeout(r, (answer.retryAfter as number) * 1000));
          answer = await post(agent, target, body, token);
        }
        latenciesMs.push(performance.now() - t);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  return { latenciesMs, statuses, elapsedMs: performance.now() - started, refused };
}

/** Open loop: requests start at a fixed rate whatever the answers do (latency under a given offered load). */
export async function openLoop(url: string, bodies: Buffer[], token: string, perSecond: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(url);
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
      post(agent, target, bodies[i] as Buffer, token).then(({ status }) => {
        latenciesMs.push(performance.now() - t);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    );
  }
  await Promise.all(inflight);
  agent.destroy();
  return { latenciesMs, statuses, elapsedMs: performance.now() - started, refused: 0 };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
