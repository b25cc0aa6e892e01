/**
 * What can be refused on /slack/events from the headers alone, before a byte of the body is read:
 * no signature, a timestamp outside the replay window, a declared body over the limit. An
 * unauthenticated client then costs a header parse, not a buffered body (issue 9, item 2).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Slack's replay window: a request signed more than 5 minutes ago is refused. */
export const SLACK_MAX_AGE_SECONDS = 5 * 60;
/** Clock skew tolerated the other way: a timestamp further in the future is refused. */
export const SLACK_MAX_FUTURE_SECONDS = 60;

export interface SlackRefusal {
  status: 400 | 401 | 413 | 503;
  reason: string;
}

export interface SignedHeaders {
  signature: string;
  timestampSeconds: number;
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function checkSlackHeaders(headers: IncomingHttpHeaders, nowMs: number, bodyLimitBytes: number): SignedHeaders | SlackRefusal {
  const signature = single(headers, 'x-slack-signature');
  const timestamp = single(headers, 'x-slack-request-timestamp');
  if (signature === undefined || timestamp === undefined) {
    return { status: 401, reason: 'Slack requests must carry x-slack-signature and x-slack-request-timestamp' };
  }
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return { status: 401, reason: 'x-slack-signature is not a v0 signature' };
  if (!/^\d{1,12}$/.test(timestamp)) return { status: 401, reason: 'x-slack-request-timestamp is not a Unix time in seconds' };
  const timestampSeconds = Number(timestamp);
  const nowSeconds = Math.floor(nowMs / 1000);
  if (timestampSeconds < nowSeconds - SLACK_MAX_AGE_SECONDS) return { status: 401, reason: 'the request was signed more than 5 minutes ago' };
  if (timestampSeconds > nowSeconds + SLACK_MAX_FUTURE_SECONDS) return { status: 401, reason: 'the request timestamp is in the future' };
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > bodyLimitBytes) return { status: 413, reason: `the body is ${declared} bytes; the limit is ${bodyLimitBytes}` };
  return { signature, timestampSeconds };
}

/** How long a signature must be remembered: until its timestamp leaves the replay window, plus a second. */
export function rememberForMs(timestampSeconds: number, nowMs: number): number {
  return Math.max(1_000, (timestampSeconds + SLACK_MAX_AGE_SECONDS + 1) * 1000 - nowMs + 1_000);
}
