/**
 * One WATCH request read with our own bounded line reader (watch-lines.ts) instead of
 * client-node's Watch, whose readline keeps a line without a newline until the process runs out
 * of memory (issue 20). The request goes through the cluster's one connection pool.
 *
 * Ends: the server closing the stream, a quiet stream (nothing read for `quietMs`), the stream's
 * byte budget spent, and stop() are ordinary ends (the caller resumes from the last
 * resourceVersion); a line over the cap, a non-200 answer and a broken connection are
 * KubeActionErrors, and so is an in-band ERROR event (with its status code, e.g. 410).
 */
import type { Dispatcher } from 'undici';
import type { ClusterRequest } from './connection-pool.js';
import { KubeActionError, toKubeActionError, where, type KubeCall } from './errors.js';
import { parseWatchEvent, WatchLineReader, type WatchLineLimits } from './watch-lines.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** How a watch ended; `failed` means `done` rejects. */
export type WatchEnd = 'server-closed' | 'quiet' | 'stream-budget-spent' | 'stopped' | 'failed';

export interface WatchStats {
  bytesRead: number;
  /** Event lines delivered to onEvent. */
  events: number;
  /** Lines that were not a watch event (not JSON, half JSON, not {type, object}): skipped. */
  skippedLines: number;
  /** Events onEvent threw on: the watch goes on (as with client-node's Watch), the caller's bug counted. */
  handlerErrors: number;
  /** Set once the watch has ended. */
  end?: WatchEnd;
}

export interface WatchHandle {
  stop(): void;
  /** Resolves when the watch ends (server close, quiet, byte budget, or stop()); rejects with a KubeActionError. */
  done: Promise<void>;
  /** What was read so far, for the caller's metrics. */
  stats(): WatchStats;
}

export interface WatchStreamOptions {
  url: URL;
  call: KubeCall;
  limits: WatchLineLimits;
  /** A stream that sends nothing for this long is ended (an ordinary end: bookmarks keep a healthy one talking). */
  quietMs: number;
  /** How long the server may take to answer with its headers. */
  headersTimeoutMs: number;
  onEvent: (type: WatchEventType, object: unknown) => void;
}

/** Enough of a refusal's body to read its Status message; the rest is not read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

async function boundedText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const pieces: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    pieces.push(chunk);
    bytes += chunk.length;
    if (bytes >= MAX_ERROR_BODY_BYTES) break;
  }
  return Buffer.concat(pieces).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
}

export class WatchStream {
  private readonly controller = new AbortController();
  private readonly reader: WatchLineReader;
  private quietTimer?: NodeJS.Timeout;
  private wentQuiet = false;
  private stopped = false;
  private failure?: KubeActionError;
  private events = 0;
  private skippedLines = 0;
  private handlerErrors = 0;
  private end?: WatchEnd;
  private settle!: () => void;
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(private readonly options: WatchStreamOptions) {
    this.reader = new WatchLineReader(options.limits);
  }

  /**
   * Sends the request and waits for the answer's headers; the body is then read in the
   * background. Never rejects: a failure to start is how `done` ends.
   */
  async start(request: ClusterRequest): Promise<WatchHandle> {
    const { url } = this.options;
    try {
      const response = await request.dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { ...request.headers, Accept: 'application/json' },
        signal: this.controller.signal,
        headersTimeout: this.options.headersTimeoutMs,
      });
      if (response.statusCode !== 200) {
        const body = await boundedText(response.body).catch(() => '');
        // The headers go along: a 429 or 503 carries its Retry-After to the watch loop's backoff.
        this.finish('failed', toKubeActionError({ code: response.statusCode, body, headers: response.headers }, this.options.call));
      } else {
        void this.read(response.body);
      }
    } catch (err) {
      this.finish(this.stopped ? 'stopped' : 'failed', this.stopped ? undefined : toKubeActionError(err, this.options.call, { timeoutMs: this.options.headersTimeoutMs }));
    }
    return {
      stop: () => this.stop(),
      done: this.settled.then(() => {
        if (this.failure) throw this.failure;
      }),
      stats: () => ({ bytesRead: this.reader.bytesRead, events: this.events, skippedLines: this.skippedLines, handlerErrors: this.handlerErrors, ...(this.end ? { end: this.end } : {}) }),
    };
  }

  stop(): void {
    if (this.end) return;
    this.stopped = true;
    this.controller.abort();
    this.finish('stopped');
  }

  private async read(body: Dispatcher.ResponseData['body']): Promise<void> {
    const deliver = (line: string): void => this.deliver(line);
    let end: WatchEnd = 'server-closed';
    try {
      this.armQuietTimer();
      for await (const chunk of body as AsyncIterable<Buffer>) {
        this.armQuietTimer();
        const verdict = this.reader.push(chunk, deliver);
        if (verdict === 'line-too-long') {
          const { call, limits } = this.options;
          // Breaking out of the loop destroys the body, which aborts the request and its socket.
          this.failure = new KubeActionError('line-too-long', `Cluster ${call.cluster} sent a watch line longer than ${limits.maxLineBytes} bytes on ${call.resource} in ${where(call)}: the watch was ended and nothing of the line was kept`, call, undefined, { maxLineBytes: limits.maxLineBytes });
          end = 'failed';
          break;
        }
        if (verdict === 'stream-budget-spent') {
          end = 'stream-budget-spent';
          break;
        }
      }
      if (end === 'server-closed') this.reader.end(deliver);
    } catch (err) {
      if (this.stopped) end = 'stopped';
      else if (this.wentQuiet) end = 'quiet';
      else {
        end = 'failed';
        this.failure = toKubeActionError(err, this.options.call);
      }
    } finally {
      body.destroy();
      this.finish(end);
    }
  }

  private deliver(line: string): void {
    const event = parseWatchEvent(line);
    if (!event) {
      this.skippedLines++;
      return;
    }
    this.events++;
    if (event.type === 'ERROR') {
      // An in-band Status (410 Expired above all): the watch ends with it once the server closes.
      const status = event.object as { code?: unknown };
      this.failure = toKubeActionError({ code: typeof status.code === 'number' ? status.code : 500, body: event.object }, this.options.call);
    }
    try {
      this.options.onEvent(event.type, event.object);
    } catch {
      this.handlerErrors++;
    }
  }

  /** Starts the quiet timer, or pushes it back: one timer per stream, refreshed on every chunk. */
  private armQuietTimer(): void {
    // A cleared timer would start again on refresh(): none once the stream has ended.
    if (this.end) return;
    if (this.quietTimer) {
      this.quietTimer.refresh();
      return;
    }
    this.quietTimer = setTimeout(() => {
      this.wentQuiet = true;
      this.controller.abort();
    }, this.options.quietMs);
    this.quietTimer.unref();
  }

  private finish(end: WatchEnd, failure?: KubeActionError): void {
    clearTimeout(this.quietTimer);
    if (this.end) return;
    this.end = end;
    // An ERROR event heard before an ordinary end still fails the watch (as it did with client-node's Watch).
    if (failure) this.failure = failure;
    this.settle();
  }
}
