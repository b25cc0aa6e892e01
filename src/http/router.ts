/** A small router: exact paths and `:param` segments, nothing else. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL) => Promise<void> | void;

interface RouteEntry {
  method: string;
  segments: string[];
  handler: Handler;
}

export class Router {
  private readonly routes: RouteEntry[] = [];

  on(method: string, path: string, handler: Handler): this {
    this.routes.push({ method, segments: path.split('/').filter(Boolean), handler });
    return this;
  }

  /** The handler and params for a request, or which methods the path allows (for a 405). */
  match(method: string, pathname: string): { handler: Handler; params: Record<string, string> } | { allowed: string[] } | undefined {
    const parts = pathname.split('/').filter(Boolean);
    const allowed: string[] = [];
    for (const route of this.routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const ok = route.segments.every((seg, i) => {
        const part = parts[i] as string;
        if (seg.startsWith(':')) {
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            return false;
          }
          return true;
        }
        return seg === part;
      });
      if (!ok) continue;
      if (route.method === method) return { handler: route.handler, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { allowed } : undefined;
  }
}
