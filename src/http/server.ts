/** The one HTTP server: ingest, read API, health, metrics, and (when configured) Slack. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Env } from '../config/env.js';
import type { Logger } from '../obs/logger.js';
import { HttpError } from './http-error.js';
import { sendJson } from './io.js';
import type { Router } from './router.js';

export type RawHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * The request target as a URL, or a 400. Node hands over whatever follows the method on the
 * request line (`http://[::1`, `http://a:b@c:99999/`), and `new URL` throws on many of them:
 * outside a handler that would end the process.
 */
export function requestUrl(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    throw new HttpError(400, 'bad_request_target', `the request target is not a valid path: ${JSON.stringify((target ?? '').slice(0, 200))}`);
  }
}

/** How much an unauthenticated client can hold: connections, and seconds per request. */
export interface HttpLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { maxConnections: 1024, headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000 };

export function httpLimitsFromEnv(env: Pick<Env, 'HTTP_MAX_CONNECTIONS' | 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'>): HttpLimits {
  return {
    maxConnections: env.HTTP_MAX_CONNECTIONS,
    headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
}

/** A client that hung up mid-request: nothing went wrong on our side. */
export function isClientAbort(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (err as Error | undefined)?.message === 'aborted';
}

export function createHttpServer(router: Router, logger: Logger, mounts: Record<string, RawHandler> = {}, limits: HttpLimits = DEFAULT_HTTP_LIMITS): Server {
  const server = createServer({
    // Node checks request and header deadlines on this interval (default 30 s, which let a slow body live for a minute more).
    connectionsCheckingInterval: Math.min(1_000, limits.requestTimeoutMs),
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
  }, (req, res) => {
    let path = '';
    const respond = async (): Promise<void> => {
      const url = requestUrl(req.url);
      path = url.pathname;
      const mounted = mounts[url.pathname];
      if (mounted) return mounted(req, res);
      const match = router.match(req.method ?? 'GET', url.pathname);
      if (!match) throw new HttpError(404, 'not_found', `no route ${req.method} ${url.pathname.slice(0, 200)}`);
      if ('allowed' in match) {
        throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; use ${match.allowed.join(' or ')}`, undefined, {
          allow: match.allowed.join(', '),
        });
      }
      await match.handler(req, res, match.params, url);
    };
    respond().catch((err: unknown) => {
      if (err instanceof HttpError) {
        if (!res.headersSent) sendJson(res, err.status, { error: err.code, message: err.message, ...err.details }, err.headers);
        return;
      }
      if (isClientAbort(err)) {
        logger.debug({ err: (err as Error).message, path: path.slice(0, 200) }, 'client went away mid-request');
        res.destroy();
        return;
      }
      logger.error({ err, path: path.slice(0, 200) }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'internal error; see the Glidepath log' });
      else res.destroy();
    });
  });
  // Over the cap, Node closes new connections at once instead of holding them.
  server.maxConnections = limits.maxConnections;
  return server;
}
