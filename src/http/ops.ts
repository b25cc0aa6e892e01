/**
 * /healthz (the process answers), /readyz (a write to each of this process's queues would
 * succeed, its workers run, it holds the fact partitions it should), /metrics.
 */
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { safeEqual } from './auth.js';
import { bearerToken, sendJson, sendText } from './io.js';
import type { Router } from './router.js';
import { answerWithin } from '../obs/deadline.js';
import type { Metrics } from '../obs/metrics.js';

export interface OpsDeps {
  redis: Redis;
  workers: () => Worker[];
  queues: Queue[];
  /** Facts waiting for a reducer over the partitions (a facts job carries a batch of them). */
  waitingFacts?: () => Promise<number>;
  metrics: Metrics;
  /** Bearer token for /metrics; without it /metrics is open to whoever reaches the port. */
  metricsToken?: string | undefined;
  /** True once the process is shutting down: readiness fails first, so traffic moves away before the server stops. */
  stopping?: () => boolean;
  /** The running config file's hash, shown so a rollout of a ConfigMap a replica refused is visible. */
  configHash?: () => string | undefined;
  /**
   * Keys in the slots of the queues this process writes (keys.writeProbe): /readyz writes each
   * one, so a read-only replica, a master out of memory (noeviction) or a shard that moved
   * fails readiness the way the writes themselves would fail, where a PING would still answer.
   */
  writeProbes?: () => string[];
  /** The fact partitions of a worker replica: not ready while it holds none it should. */
  partitions?: { healthy(): { ok: boolean; reason?: string }; status(): { held: number[]; target: number; live: number; partitions: number } };
}

const PROBE_TIMEOUT_MS = 1_000;

/** undefined when every probe key was written; otherwise what failed. */
async function writeProblem(redis: Redis, keys: string[]): Promise<string | undefined> {
  if (keys.length === 0) return undefined;
  try {
    // One command per key (not one pipeline): on Redis Cluster the keys are in different slots.
    const writes = Promise.all(keys.map((key) => redis.set(key, String(Date.now()), 'PX', 10_000)));
    const replies = await answerWithin<unknown>(writes, PROBE_TIMEOUT_MS, () => 'timeout');
    if (replies === 'timeout') return `no answer to a queue write within ${PROBE_TIMEOUT_MS} ms`;
    return undefined;
  } catch (err) {
    return `a queue write failed: ${(err as Error).message.slice(0, 200)}`;
  }
}

async function redisAnswers(redis: Redis): Promise<boolean> {
  try {
    const pong = await answerWithin(redis.ping(), PROBE_TIMEOUT_MS, () => 'timeout');
    return pong === 'PONG';
  } catch {
    return false;
  }
}

export function registerOpsRoutes(router: Router, deps: OpsDeps): void {
  router.on('GET', '/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));

  router.on('GET', '/readyz', async (_req, res) => {
    if (deps.stopping?.()) return sendJson(res, 503, { status: 'shutting down' });
    const probes = deps.writeProbes?.() ?? [];
    const redisProblem = probes.length > 0 ? await writeProblem(deps.redis, probes) : (await redisAnswers(deps.redis)) ? undefined : 'unreachable';
    const workers = deps.workers().map((w) => ({ queue: w.name, running: w.isRunning() }));
    const partitions = deps.partitions?.healthy();
    const ready = redisProblem === undefined && workers.every((w) => w.running) && (partitions?.ok ?? true);
    sendJson(res, ready ? 200 : 503, {
      status: ready ? 'ready' : 'not ready',
      redis: redisProblem === undefined ? 'ok' : redisProblem === 'unreachable' ? 'unreachable' : redisProblem,
      workers,
      ...(deps.configHash?.() !== undefined ? { config: { hash: deps.configHash() } } : {}),
      ...(deps.partitions ? { partitions: { ...deps.partitions.status(), ...(partitions?.reason ? { problem: partitions.reason } : {}) } } : {}),
    });
  });

  router.on('GET', '/metrics', async (req, res) => {
    const presented = bearerToken(req);
    if (deps.metricsToken !== undefined && (presented === undefined || !safeEqual(presented, deps.metricsToken))) {
      sendJson(res, 401, { error: 'unauthorized', message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' }, { 'www-authenticate': 'Bearer' });
      return;
    }
    if (await redisAnswers(deps.redis)) {
      // The facts queues of all partitions add up under one name (workers scale on the total).
      const totals = new Map<string, Record<string, number>>();
      for (const queue of deps.queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
        const total = totals.get(queue.name) ?? {};
        for (const [state, n] of Object.entries(counts)) total[state] = (total[state] ?? 0) + n;
        totals.set(queue.name, total);
      }
      for (const [name, counts] of totals) for (const [state, n] of Object.entries(counts)) deps.metrics.queueDepth.set({ queue: name, state }, n);
      if (deps.waitingFacts) deps.metrics.factsWaiting.set(await deps.waitingFacts());
    }
    sendText(res, 200, await deps.metrics.registry.metrics(), deps.metrics.registry.contentType);
  });
}
