/**
 * Ingest routes. Transport only: verify the token, parse, validate, normalise, queue. The
 * answer is 202 only once the fact is in Redis; nothing is reduced here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { ConfigFile } from '../config/file.js';
import { formatPath } from '../config/errors.js';
import { clusterOfToken, pipelinesOfCiToken } from '../http/auth.js';
import { HttpError } from '../http/http-error.js';
import { bearerToken, parseJson, readBody, requireJson, sendJson } from '../http/io.js';
import type { Router } from '../http/router.js';
import { answerWithin } from '../obs/deadline.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { AnnouncementClaims } from './announcements.js';
import type { Fact, FactSource, ReleaseAnnouncedFact } from './fact.js';
import { FactBacklog } from './backlog.js';
import type { FactQueue } from './fact-queue.js';
import { normaliseAnnouncement, normaliseApplication, normaliseRollout } from './normalise.js';
import { wellFormed } from '../model/unicode.js';
import { applicationFactBody, releaseAnnouncementBody, rolloutFactBody } from './schemas.js';

export interface IngestDeps {
  config: ConfigFile;
  tokens: ReadonlyMap<string, string>;
  /** CI tokens → the pipelines each may announce (CI_TOKENS). */
  ciTokens?: ReadonlyMap<string, readonly string[]>;
  /** First-announcement claims: what CI announced cannot be changed by a later announcement. */
  announcements?: AnnouncementClaims;
  facts: FactQueue;
  metrics: Metrics;
  logger: Logger;
  maxBodyBytes: number;
  /** How long to wait for Redis before answering 503. */
  queueTimeoutMs?: number;
  /** Facts that may wait in the queues before a fact is refused with 503 (INGEST_MAX_QUEUED_FACTS; unset or 0: no bound). */
  maxQueuedFacts?: number;
  now?: () => number;
}

const clusterOf = (caller: Caller): string => (caller.kind === 'cluster' ? caller.cluster : '');

/** Why a pull-request link is refused: only https links to the configured hosts are shown in Slack. */
export function pullRequestProblem(link: string, hosts: readonly string[]): string | undefined {
  const url = new URL(link);
  if (url.protocol !== 'https:') return 'must be an https link';
  if (url.username || url.password) return 'must not hold a user name or password';
  if (!hosts.includes(url.host)) {
    return hosts.length === 0
      ? 'no pull-request hosts are configured (settings.pullRequestHosts); links are refused until one is'
      : `host "${url.host}" is not one of settings.pullRequestHosts (${hosts.join(', ')})`;
  }
  return undefined;
}

/** 409 when the release was announced before with other details; the undo gives back a fresh claim. */
async function claimAnnouncement(claims: AnnouncementClaims | undefined, fact: ReleaseAnnouncedFact, timeoutMs: number): Promise<(() => Promise<void>) | undefined> {
  if (!claims) return undefined;
  let outcome: Awaited<ReturnType<AnnouncementClaims['claim']>>;
  try {
    outcome = await withTimeout(claims.claim(fact), timeoutMs);
  } catch {
    throw new HttpError(503, 'unavailable', 'the announcement could not be checked (Redis unreachable); nothing was recorded, retry later', undefined, { 'retry-after': '5' });
  }
  if (outcome.kind === 'conflict') {
    throw new HttpError(
      409,
      'conflict',
      `release ${fact.releaseId} of ${fact.pipeline} was announced with another ${outcome.fields.join(', ')}; an announced release cannot be changed (announce a new release id)`,
      { fields: outcome.fields },
    );
  }
  return outcome.kind === 'new' ? outcome.release : undefined;
}

/** Each body schema behind the well-formed check, built once (building a zod pipe per request was garbage on every fact). */
const checked = new WeakMap<z.ZodType, z.ZodType>();

/**
 * Whether a body's text can hold a lone surrogate once parsed: only through a `\uD800`-`\uDFFF`
 * escape, since decoding UTF-8 never makes one (a bad sequence becomes U+FFFD). An escaped
 * backslash before `u` matches too, which only costs the full walk. Bodies without one (all
 * that clusters send) skip walking every string of the parsed body again.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
export const mayHoldLoneSurrogate = (text: string): boolean => SURROGATE_ESCAPE.test(text);

function guardedOf<T>(schema: z.ZodType<T>): z.ZodType<T> {
  let guarded = checked.get(schema) as z.ZodType<T> | undefined;
  if (!guarded) checked.set(schema, (guarded = wellFormed(schema)));
  return guarded;
}

function validate<T>(schema: z.ZodType<T>, body: Body): T {
  const result = (mayHoldLoneSurrogate(body.text) ? guardedOf(schema) : schema).safeParse(body.json);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 20).map((i) => ({ path: formatPath(i.path), message: i.message }));
  const first = issues[0] as { path: string; message: string };
  throw new HttpError(422, 'invalid_body', `${first.path}: ${first.message}`, { issues });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return answerWithin(promise, ms, () => {
    throw new Error(`Redis did not answer within ${ms} ms`);
  });
}

/** Who sent a request: a cluster (its ingest token) or CI (its token, bound to pipelines). */
type Caller = { kind: 'cluster'; cluster: string } | { kind: 'ci'; pipelines: readonly string[] };
/** The fact, and what to undo if it cannot be queued. */
type Parsed = { fact: Fact; undo?: () => Promise<void> };
/** A request's body: its text (for the surrogate check) and the JSON parsed from it. */
type Body = { text: string; json: unknown };
type Parse = (body: Body, caller: Caller, receivedAt: number) => Parsed | Promise<Parsed>;

/** Seconds a refused sender is asked to wait: about what workers need to take a bound's worth off at a few thousand facts a second. */
export const BEHIND_RETRY_AFTER_SECONDS = 5;

const behind = (bound: number) =>
  new HttpError(503, 'behind', `the reducers are behind (${bound} or more facts wait in the queue); nothing was recorded, retry after the Retry-After seconds`, undefined, {
    'retry-after': String(BEHIND_RETRY_AFTER_SECONDS),
  });

const unauthorized = (what: string) =>
  new HttpError(401, 'unauthorized', `missing or unknown Bearer token; ${what}`, undefined, { 'www-authenticate': 'Bearer' });

export function registerIngestRoutes(router: Router, deps: IngestDeps): void {
  const now = deps.now ?? Date.now;
  const pipelines = new Set(deps.config.pipelines.map((p) => p.name));
  const ciTokens = deps.ciTokens ?? new Map<string, readonly string[]>();
  const backlog = new FactBacklog(deps.facts, deps.maxQueuedFacts ?? 0);

  const callerOf = (req: IncomingMessage): Caller | undefined => {
    const presented = bearerToken(req);
    const cluster = clusterOfToken(deps.tokens, presented);
    if (cluster !== undefined) return { kind: 'cluster', cluster };
    const bound = pipelinesOfCiToken(ciTokens, presented);
    return bound === undefined ? undefined : { kind: 'ci', pipelines: bound };
  };

  const handle = (source: FactSource, parse: Parse) => async (req: IncomingMessage, res: ServerResponse) => {
    deps.metrics.factsReceived.inc({ source });
    try {
      const caller = callerOf(req);
      if (caller === undefined) {
        throw unauthorized(source === 'ci' ? 'CI announces with a token from CI_TOKENS bound to the pipeline' : 'each token in INGEST_TOKENS names the cluster that sends it');
      }
      if (source === 'ci' && caller.kind === 'cluster') {
        throw new HttpError(403, 'forbidden', `the ingest token of cluster "${caller.cluster}" cannot announce releases; CI announces with its own token (CI_TOKENS=pipeline=token)`);
      }
      if (source !== 'ci' && caller.kind === 'ci') {
        throw new HttpError(403, 'forbidden', 'a CI token can only announce releases (POST /v1/releases); cluster facts need the cluster\'s ingest token (INGEST_TOKENS)');
      }
      requireJson(req);
      // Refused before the body is read or parsed: shedding load must cost less than taking it.
      if (!backlog.admit()) {
        deps.metrics.factsRefusedBehind.inc({ source });
        throw behind(backlog.bound);
      }
      let queued = false;
      let id: string;
      try {
        const text = (await readBody(req, deps.maxBodyBytes)).toString('utf8');
        const { fact, undo } = await parse({ text, json: parseJson(text) }, caller, now());
        try {
          id = await withTimeout(deps.facts.add(fact), deps.queueTimeoutMs ?? 3_000);
          queued = true;
        } catch (err) {
          deps.logger.error({ err: (err as Error).message, source }, 'cannot queue fact');
          await undo?.().catch(() => undefined);
          throw new HttpError(503, 'unavailable', 'the fact could not be queued (Redis unreachable); nothing was recorded, retry later', undefined, {
            'retry-after': '5',
          });
        }
      } finally {
        backlog.settle(queued);
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
    handle('rollouts-webhook', (body, caller, at) => ({ fact: normaliseRollout(validate(rolloutFactBody, body), clusterOf(caller), at) })),
  );
  router.on(
    'POST',
    '/v1/facts/argocd',
    handle('argocd-webhook', (body, caller, at) => ({ fact: normaliseApplication(validate(applicationFactBody, body), clusterOf(caller), at) })),
  );
  router.on(
    'POST',
    '/v1/releases',
    handle('ci', async (request, caller, at) => {
      const body = validate(releaseAnnouncementBody, request);
      if (!pipelines.has(body.pipeline)) {
        throw new HttpError(422, 'invalid_body', `pipeline: unknown pipeline "${body.pipeline.slice(0, 63)}" (known: ${[...pipelines].join(', ') || 'none'})`, {
          issues: [{ path: 'pipeline', message: 'unknown pipeline' }],
        });
      }
      const bound = caller.kind === 'ci' ? caller.pipelines : [];
      if (!bound.includes(body.pipeline)) {
        throw new HttpError(403, 'forbidden', `this CI token may announce releases of ${bound.join(', ')} only, not of pipeline "${body.pipeline}"`);
      }
      const linkProblem = body.pullRequestUrl === undefined ? undefined : pullRequestProblem(body.pullRequestUrl, deps.config.settings.pullRequestHosts);
      if (linkProblem) {
        throw new HttpError(422, 'invalid_body', `pullRequestUrl: ${linkProblem}`, { issues: [{ path: 'pullRequestUrl', message: linkProblem }] });
      }
      const fact = normaliseAnnouncement(body, at);
      return { fact, undo: await claimAnnouncement(deps.announcements, fact, deps.queueTimeoutMs ?? 3_000) };
    }),
  );
}
