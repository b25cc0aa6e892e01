/**
 * Open watch connections: newline-delimited JSON events, BOOKMARKs for clients that allow them,
 * an in-band ERROR (410 Expired) when the requested version is gone, and `timeoutSeconds`.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import type { ObjectStore, WatchEventType } from './store.js';
import { toTable } from './table.js';

interface OpenWatch {
  rt: ResourceType;
  res: ServerResponse;
  bookmarks: boolean;
  stop: () => void;
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

export class WatchStreams {
  private readonly open = new Set<OpenWatch>();

  /**
   * How late this kind's stream delivers (real ms; a lagging stream, as an API server under load or
   * a slow link makes one). Events keep their order within a stream; streams drift apart.
   */
  lagMs?: (rt: ResourceType) => number | undefined;

  constructor(private readonly store: ObjectStore) {}

  start(rt: ResourceType, namespace: string | undefined, params: URLSearchParams, res: ServerResponse, table: boolean): void {
    const now = (): number => this.store.clock.now();
    // Lines held back by a lag, in order: lag reorders streams, never the events of one.
    const held: { at: number; line: string }[] = [];
    const release = (): void => {
      while (held.length > 0 && held[0]!.at <= Date.now()) {
        const { line } = held.shift()!;
        if (!res.writableEnded) res.write(line);
      }
      if (held.length > 0) setTimeout(release, held[0]!.at - Date.now());
    };
    const write = (type: WatchEventType | 'ERROR', object: unknown): void => {
      const line = JSON.stringify({ type, object }) + '\n';
      const lag = this.lagMs?.(rt);
      if (!lag && held.length === 0) {
        if (!res.writableEnded) res.write(line);
        return;
      }
      held.push({ at: Math.max(held.at(-1)?.at ?? 0, Date.now() + (lag ?? 0)), line });
      if (held.length === 1) setTimeout(release, held[0]!.at - Date.now());
    };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    let stop: (() => void) | undefined;
    try {
      stop = this.store.watch(
        rt,
        namespace,
        {
          resourceVersion: params.get('resourceVersion') ?? undefined,
          labelSelector: params.get('labelSelector') ?? undefined,
          fieldSelector: params.get('fieldSelector') ?? undefined,
        },
        (type, object) => write(type, table ? toTable(rt, [object], object.metadata.resourceVersion ?? '', now()) : object),
      );
    } catch (err) {
      // A watch that cannot start is reported in-band, as the real API server does for 410.
      if (err instanceof ApiError) {
        write('ERROR', err.toStatus());
        res.end();
        return;
      }
      throw err;
    }
    const watch: OpenWatch = { rt, res, bookmarks: isTrue(params.get('allowWatchBookmarks')), stop: () => stop?.() };
    this.open.add(watch);
    const timeout = Number(params.get('timeoutSeconds') ?? '0');
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    const cleanup = (): void => {
      stop?.();
      if (timer) clearTimeout(timer);
      this.open.delete(watch);
    };
    res.on('close', cleanup);
    res.on('finish', cleanup);
  }

  /** Sends a BOOKMARK with the current resourceVersion on every watch that asked for them. */
  sendBookmarks(): void {
    for (const w of this.open) {
      if (!w.bookmarks || w.res.writableEnded) continue;
      const object = { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), metadata: { resourceVersion: this.store.resourceVersion() } };
      w.res.write(JSON.stringify({ type: 'BOOKMARK', object }) + '\n');
    }
  }

  /** Ends every open watch, as an API server restart would. */
  dropAll(): void {
    for (const w of [...this.open]) {
      w.stop();
      w.res.end();
    }
    this.open.clear();
  }
}
