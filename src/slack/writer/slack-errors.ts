/**
 * What a failed Slack call means for the job, decided in one place: wait and reschedule (429),
 * retry with backoff (5xx, network), stop (configuration errors no retry will fix), or start a
 * new thread (the message to edit was deleted).
 */
import { ErrorCode } from '@slack/web-api';
import { UnrecoverableError } from 'bullmq';
import { PERMANENT_SLACK_ERRORS } from '../errors.js';

export type SlackFailure =
  | { kind: 'rate-limited'; retryAfterMs: number }
  | { kind: 'permanent'; error: string; hint: string }
  /** The message to edit was deleted in Slack: not a configuration error; the writer starts a new thread. */
  | { kind: 'parent-gone'; error: string }
  | { kind: 'transient'; error: string };

export function classifySlackError(err: unknown): SlackFailure {
  const e = err as { code?: string; retryAfter?: number; data?: { error?: string }; statusCode?: number; message?: string };
  if (e.code === ErrorCode.RateLimitedError) return { kind: 'rate-limited', retryAfterMs: Math.max(1, e.retryAfter ?? 1) * 1000 };
  if (e.code === ErrorCode.PlatformError) {
    const error = e.data?.error ?? 'unknown_error';
    if (error === 'message_not_found') return { kind: 'parent-gone', error };
    const hint = PERMANENT_SLACK_ERRORS[error];
    if (hint) return { kind: 'permanent', error, hint };
    // ratelimited without a Retry-After, internal_error, fatal_error, service_unavailable...
    return { kind: 'transient', error };
  }
  if (e.code === ErrorCode.HTTPError) return { kind: 'transient', error: `http_${e.statusCode ?? 'error'}` };
  return { kind: 'transient', error: e.code ?? e.message ?? String(err) };
}

/**
 * Whether a failed chat.postMessage may still have posted the message. A 429 or an `ok:false`
 * answer is Slack saying no; a 5xx, a dropped connection or a timeout says nothing either way.
 */
export function mayHaveLanded(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  if (code === ErrorCode.RateLimitedError || code === ErrorCode.PlatformError) return false;
  return true;
}

/**
 * The message to edit was deleted in Slack. Unrecoverable for the job that met it, but no
 * configuration error: the writer forgets the thread, and the retry starts a new one.
 */
export class ParentGoneError extends UnrecoverableError {}
