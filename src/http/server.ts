/** The one HTTP server: ingest, read API, health, metrics, and (when configured) Slack. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

export function createHttpServer(router: Router, logger: Logger, mounts: Record<string, RawHandler> = {}): Server {
  const server = createServer((req, res) => {
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
      logger.error({ err, path: path.slice(0, 200) }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'internal error; see the Glidepath log' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  return server;
}
