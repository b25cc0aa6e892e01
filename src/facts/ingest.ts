/**
 * Ingest routes. Transport only: verify the token, parse, validate, normalise, queue. The
 * answer is 202 only once the fact is in Redis; nothing is reduced here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { ConfigFile } from '../config/file.js';
import { formatPath } from '../config/errors.js';
import { clusterOfToken } from '../http/auth.js';
import { HttpError } from '../http/http-error.js';
import { bearerToken, parseJson, readBody, requireJson, sendJson } from '../http/io.js';
import type { Router } from '../http/router.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { Fact, FactSource } from './fact.js';
import type { FactQueue } from './fact-queue.js';
import { normaliseAnnouncement, normaliseApplication, normaliseRollout } from './normalise.js';
import { wellFormed } from '../model/unicode.js';
import { applicationFactBody, releaseAnnouncementBody, rolloutFactBody } from './schemas.js';

export interface IngestDeps {
  config: ConfigFile;
  tokens: ReadonlyMap<string, string>;
  facts: FactQueue;
  metrics: Metrics;
  logger: Logger;
  maxBodyBytes: number;
  /** How long to wait for Redis before answering 503. */
  queueTimeoutMs?: number;
  now?: () => number;
}

function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = wellFormed(schema).safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 20).map((i) => ({ path: formatPath(i.path), message: i.message }));
  const first = issues[0] as { path: string; message: string };
  throw new HttpError(422, 'invalid_body', `${first.path}: ${first.message}`, { issues });
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

type Parse = (json: unknown, cluster: string, receivedAt: number) => Fact;

export function registerIngestRoutes(router: Router, deps: IngestDeps): void {
  const now = deps.now ?? Date.now;
  const pipelines = new Set(deps.config.pipelines.map((p) => p.name));

  const handle = (source: FactSource, parse: Parse) => async (req: IncomingMessage, res: ServerResponse) => {
    deps.metrics.factsReceived.inc({ source });
    try {
      const cluster = clusterOfToken(deps.tokens, bearerToken(req));
      if (cluster === undefined) {
        throw new HttpError(401, 'unauthorized', 'missing or unknown Bearer token; each token in INGEST_TOKENS names the cluster that sends it', undefined, {
          'www-authenticate': 'Bearer',
        });
      }
      requireJson(req);
      const fact = parse(parseJson(await readBody(req, deps.maxBodyBytes)), cluster, now());
      let id: string;
      try {
        id = await withTimeout(deps.facts.add(fact), deps.queueTimeoutMs ?? 3_000);
      } catch (err) {
        deps.logger.error({ err: (err as Error).message, source }, 'cannot queue fact');
        throw new HttpError(503, 'unavailable', 'the fact could not be queued (Redis unreachable); nothing was recorded, retry later', undefined, {
          'retry-after': '5',
        });
      }
      deps.metrics.factsAccepted.inc({ source });
      sendJson(res, 202, { accepted: true, id });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      deps.metrics.factsRejected.inc({ source, reason: err.code });
      sendJson(res, err.status, { error: err.code, message: err.message, ...err.details }, err.headers);
    }
  };

  router.on(
    'POST',
    '/v1/facts/rollouts',
    handle('rollouts-webhook', (json, cluster, at) => normaliseRollout(validate(rolloutFactBody, json), cluster, at)),
  );
  router.on(
    'POST',
    '/v1/facts/argocd',
    handle('argocd-webhook', (json, cluster, at) => normaliseApplication(validate(applicationFactBody, json), cluster, at)),
  );
  router.on(
    'POST',
    '/v1/releases',
    handle('ci', (json, cluster, at) => {
      const body = validate(releaseAnnouncementBody, json);
      if (!pipelines.has(body.pipeline)) {
        throw new HttpError(422, 'invalid_body', `pipeline: unknown pipeline "${body.pipeline.slice(0, 63)}" (known: ${[...pipelines].join(', ') || 'none'})`, {
          issues: [{ path: 'pipeline', message: 'unknown pipeline' }],
        });
      }
      return normaliseAnnouncement(body, at, cluster);
    }),
  );
}
