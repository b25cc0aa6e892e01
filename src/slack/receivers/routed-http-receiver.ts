/**
 * Bolt in HTTP mode without Bolt's own server: Glidepath serves ingest, health and Slack on one
 * port, so `src/http` routes `/slack/events` here. Transport only (bolt-js AGENTS.md rule 7):
 * verify the signature on the raw body, parse, answer Slack's handshakes, hand the body to the
 * App with an ack; business logic lives in the listeners.
 */
import { HTTPModuleFunctions, HTTPResponseAck, type App, type Receiver } from '@slack/bolt';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface RoutedHttpReceiverOptions {
  signingSecret: string;
  logger: Logger;
  /** Clock for the 5-minute replay window (tests). */
  nowMilliseconds?: () => number;
  bodyLimitBytes?: number;
}

export class RoutedHttpReceiver implements Receiver {
  private app: App | undefined;

  constructor(private readonly options: RoutedHttpReceiverOptions) {
    if (options.signingSecret.trim() === '') throw new Error('SLACK_SIGNING_SECRET is empty');
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
    let buffered;
    try {
      buffered = await HTTPModuleFunctions.parseAndVerifyHTTPRequest(
        {
          enabled: true,
          signingSecret: this.options.signingSecret,
          bodyLimit: this.options.bodyLimitBytes ?? HTTPModuleFunctions.defaultBodyLimit,
          ...(this.options.nowMilliseconds ? { nowMilliseconds: this.options.nowMilliseconds } : {}),
        },
        req,
      );
    } catch (err) {
      if (HTTPModuleFunctions.isRawBodyError(err) && (err.type === 'entity.too.large' || err.statusCode === 413)) {
        HTTPModuleFunctions.buildNoBodyResponse(res, 413);
        return;
      }
      log.warn({ err: (err as Error).message }, 'rejected a Slack request that failed signature verification');
      HTTPModuleFunctions.buildNoBodyResponse(res, 401);
      return;
    }
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
}
