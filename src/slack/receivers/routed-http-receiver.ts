/**
 * Bolt in HTTP mode without Bolt's own server: Glidepath serves ingest, health and Slack on one
 * port, so `src/http` routes `/slack/events` here. Transport only (bolt-js AGENTS.md rule 7):
 * verify the signature on the raw body, parse, answer Slack's handshakes, hand the body to the
 * App with an ack; business logic lives in the listeners.
 */
import { HTTPModuleFunctions, HTTPResponseAck, isValidSlackRequest, type App, type BufferedIncomingMessage, type Receiver } from '@slack/bolt';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HttpError } from '../../http/http-error.js';
import { readBody } from '../../http/io.js';
import { isClientAbort } from '../../http/server.js';
import { checkSlackHeaders, rememberForMs, type SlackRefusal } from './request-gate.js';
import { MemorySeenSlackRequests, type SeenSlackRequests } from './seen-requests.js';

/** Slack's payloads are a few KiB; this much is read at most before the signature is checked. */
export const DEFAULT_SLACK_BODY_LIMIT = 64 * 1024;

export interface RoutedHttpReceiverOptions {
  signingSecret: string;
  logger: Logger;
  /** Clock for the 5-minute replay window (tests). */
  nowMilliseconds?: () => number;
  /** Largest body read before the signature is checked (default 64 KiB). */
  bodyLimitBytes?: number;
  /** Signatures already received (replays refused); one process's memory unless given the Redis one. */
  seenRequests?: SeenSlackRequests;
}

/**
 * Answers a refusal and closes the connection: `Connection: close` makes Node drop the socket once
 * the answer is sent, instead of reading (and discarding) the rest of an unwanted body.
 */
function refuse(res: ServerResponse, refusal: SlackRefusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(`${refusal.reason}\n`);
}

export class RoutedHttpReceiver implements Receiver {
  private app: App | undefined;
  private readonly seen: SeenSlackRequests;

  constructor(private readonly options: RoutedHttpReceiverOptions) {
    if (options.signingSecret.trim() === '') throw new Error('SLACK_SIGNING_SECRET is empty');
    this.seen = options.seenRequests ?? new MemorySeenSlackRequests();
  }

  init(app: App): void {
    this.app = app;
  }

  /** Our HTTP server owns the port; nothing to start or stop here. */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  /** Mount on POST /slack/events. */
  readonly handleSlackRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const log = this.options.logger;
    if (this.app === undefined) {
      HTTPModuleFunctions.buildNoBodyResponse(res, 503);
      return;
    }
    const buffered = await this.verified(req, res);
    if (buffered === undefined) return;
    let body: Record<string, unknown>;
    try {
      body = HTTPModuleFunctions.parseHTTPRequestBody(buffered) as Record<string, unknown>;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'malformed Slack request body');
      HTTPModuleFunctions.buildNoBodyResponse(res, 400);
      return;
    }
    if (body.ssl_check) {
      HTTPModuleFunctions.buildSSLCheckResponse(res);
      return;
    }
    if (body.type === 'url_verification') {
      HTTPModuleFunctions.buildUrlVerificationResponse(res, body);
      return;
    }
    const ack = new HTTPResponseAck({
      logger: this.app.logger,
      processBeforeResponse: false,
      httpRequest: buffered,
      httpRequestBody: body,
      httpResponse: res,
    });
    const retryNum = HTTPModuleFunctions.extractRetryNumFromHTTPRequest(req);
    const retryReason = HTTPModuleFunctions.extractRetryReasonFromHTTPRequest(req);
    try {
      await this.app.processEvent({
        body,
        ack: ack.bind(),
        ...(retryNum !== undefined ? { retryNum } : {}),
        ...(retryReason !== undefined ? { retryReason } : {}),
      });
    } catch (err) {
      // The error already reached app.error; Slack only needs to know it was not handled.
      log.debug({ err: (err as Error).message }, 'Slack request handling failed');
      if (!res.headersSent) HTTPModuleFunctions.buildNoBodyResponse(res, 500);
    }
  };

  /**
   * The request with its body when it is Slack's and seen for the first time; otherwise the refusal
   * is answered and undefined returned. Headers first (no body read), then at most the body
   * limit, then the signature, then the replay check.
   */
  private async verified(req: IncomingMessage, res: ServerResponse): Promise<BufferedIncomingMessage | undefined> {
    const log = this.options.logger;
    const now = this.options.nowMilliseconds ?? Date.now;
    const limit = this.options.bodyLimitBytes ?? DEFAULT_SLACK_BODY_LIMIT;
    const headers = checkSlackHeaders(req.headers, now(), limit);
    if ('status' in headers) {
      log.debug({ reason: headers.reason }, 'refused a Slack request before reading its body');
      refuse(res, headers);
      return undefined;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, limit);
    } catch (err) {
      if (err instanceof HttpError) {
        refuse(res, { status: 413, reason: err.message });
        return undefined;
      }
      if (isClientAbort(err)) log.debug({ err: (err as Error).message }, 'Slack request aborted by the client');
      else log.warn({ err: (err as Error).message }, 'could not read a Slack request');
      res.destroy();
      return undefined;
    }
    const valid = isValidSlackRequest({
      signingSecret: this.options.signingSecret,
      body: raw.toString('utf8'),
      headers: { 'x-slack-signature': headers.signature, 'x-slack-request-timestamp': headers.timestampSeconds },
      nowMilliseconds: now(),
    });
    if (!valid) {
      log.warn('rejected a Slack request that failed signature verification');
      refuse(res, { status: 401, reason: 'the signature does not match' });
      return undefined;
    }
    let first: boolean;
    try {
      first = await this.seen.firstSighting(headers.signature, rememberForMs(headers.timestampSeconds, now()));
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot check a Slack request against replays (Redis?)');
      refuse(res, { status: 503, reason: 'Glidepath cannot check this request right now; try again' });
      return undefined;
    }
    if (!first) {
      log.warn({ timestamp: headers.timestampSeconds }, 'refused a replayed Slack request');
      refuse(res, { status: 401, reason: 'this signed request was already received' });
      return undefined;
    }
    const buffered = req as BufferedIncomingMessage;
    buffered.rawBody = raw;
    return buffered;
  }
}
