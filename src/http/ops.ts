/** /healthz (the process answers), /readyz (Redis reachable, workers running), /metrics. */
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { safeEqual } from './auth.js';
import { bearerToken, sendJson, sendText } from './io.js';
import type { Router } from './router.js';
import type { Metrics } from '../obs/metrics.js';

export interface OpsDeps {
  redis: Redis;
  workers: () => Worker[];
  queues: Queue[];
  metrics: Metrics;
  /** Bearer token for /metrics; without it /metrics is open to whoever reaches the port. */
  metricsToken?: string | undefined;
  /** True once the process is shutting down: readiness fails first, so traffic moves away before the server stops. */
  stopping?: () => boolean;
}

async function redisAnswers(redis: Redis): Promise<boolean> {
  try {
    const pong = await Promise.race([redis.ping(), new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 1_000))]);
    return pong === 'PONG';
  } catch {
    return false;
  }
}

export function registerOpsRoutes(router: Router, deps: OpsDeps): void {
  router.on('GET', '/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));

  router.on('GET', '/readyz', async (_req, res) => {
    if (deps.stopping?.()) return sendJson(res, 503, { status: 'shutting down' });
    const redis = await redisAnswers(deps.redis);
    const workers = deps.workers().map((w) => ({ queue: w.name, running: w.isRunning() }));
    const ready = redis && workers.every((w) => w.running);
    sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', redis: redis ? 'ok' : 'unreachable', workers });
  });

  router.on('GET', '/metrics', async (req, res) => {
    const presented = bearerToken(req);
    if (deps.metricsToken !== undefined && (presented === undefined || !safeEqual(presented, deps.metricsToken))) {
      sendJson(res, 401, { error: 'unauthorized', message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' }, { 'www-authenticate': 'Bearer' });
      return;
    }
    if (await redisAnswers(deps.redis)) {
      for (const queue of deps.queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
        for (const [state, n] of Object.entries(counts)) deps.metrics.queueDepth.set({ queue: queue.name, state }, n);
      }
    }
    sendText(res, 200, await deps.metrics.registry.metrics(), deps.metrics.registry.contentType);
  });
}
