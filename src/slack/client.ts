/**
 * The Web API client every Slack call goes through. 429s are rejected, not waited out inside the
 * client (web-api would pause *every* call of the instance, and BullMQ must reschedule the job
 * anyway); 5xx and network errors get a couple of quick retries before the job's own backoff.
 */
import { LogLevel, WebClient, type WebClientOptions } from '@slack/web-api';

export const SLACK_CLIENT_RETRY = { retries: 2, factor: 2, minTimeout: 200, maxTimeout: 1_000, randomize: true };

export function slackClientOptions(apiUrl: string | undefined): WebClientOptions {
  return {
    ...(apiUrl !== undefined ? { slackApiUrl: apiUrl } : {}),
    rejectRateLimitedCalls: true,
    retryConfig: SLACK_CLIENT_RETRY,
    timeout: 10_000,
    logLevel: LogLevel.ERROR,
  };
}

/**
 * A client like `client` (same token and API URL) that makes each call exactly once: whoever
 * uses it owns retries, and a post retried inside the client could post twice.
 */
export function withoutRetries(client: WebClient, timeoutMs = 10_000): WebClient {
  return new WebClient(client.token, { ...slackClientOptions(client.slackApiUrl), retryConfig: { retries: 0 }, timeout: timeoutMs });
}

export function createSlackClient(token: string, apiUrl: string | undefined): WebClient {
  return new WebClient(token, slackClientOptions(apiUrl));
}
