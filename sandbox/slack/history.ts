/**
 * conversations.history and conversations.replies as Slack answers them: newest first for a
 * channel's history, parent first for a thread, `oldest`/`latest` bounds (exclusive unless
 * `inclusive`), `limit` with a `next_cursor`, and each message's `metadata` only when asked
 * with `include_all_metadata`.
 */
import type { Transcript, TranscriptMessage } from './transcript.js';

type Params = Record<string, unknown>;

const tsNumber = (ts: string): number => Number(ts);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function flag(v: unknown): boolean {
  return v === true || v === 'true' || v === '1' || v === 1;
}

function shown(m: TranscriptMessage, withMetadata: boolean): Record<string, unknown> {
  return {
    type: 'message',
    user: m.user,
    ts: m.ts,
    text: m.text,
    blocks: m.blocks,
    ...(m.threadTs ? { thread_ts: m.threadTs } : m.replies.length > 0 ? { thread_ts: m.ts, reply_count: m.replies.length } : {}),
    ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
  };
}

/** Slack's window and page: bounds on ts, then `limit` (default 100, at most 999) from the cursor on. */
function page(messages: TranscriptMessage[], p: Params): { items: TranscriptMessage[]; next?: string } {
  const oldest = str(p.oldest);
  const latest = str(p.latest);
  const inclusive = flag(p.inclusive);
  const inWindow = messages.filter((m) => {
    const t = tsNumber(m.ts);
    if (oldest !== undefined && (inclusive ? t < tsNumber(oldest) : t <= tsNumber(oldest))) return false;
    if (latest !== undefined && (inclusive ? t > tsNumber(latest) : t >= tsNumber(latest))) return false;
    return true;
  });
  const limit = Math.min(999, Math.max(1, Number(p.limit ?? 100) || 100));
  const start = Number(str(p.cursor) ?? '0') || 0;
  const items = inWindow.slice(start, start + limit);
  return start + limit < inWindow.length ? { items, next: String(start + limit) } : { items };
}

export function conversationsHistory(transcript: Transcript, channel: string, p: Params): Record<string, unknown> {
  const newestFirst = [...transcript.messages(channel)].sort((a, b) => tsNumber(b.ts) - tsNumber(a.ts));
  const { items, next } = page(newestFirst, p);
  const withMetadata = flag(p.include_all_metadata);
  return {
    messages: items.map((m) => shown(m, withMetadata)),
    has_more: next !== undefined,
    response_metadata: { next_cursor: next ?? '' },
  };
}

export function conversationsReplies(transcript: Transcript, channel: string, p: Params): Record<string, unknown> | undefined {
  const parent = transcript.messages(channel).find((m) => m.ts === str(p.ts));
  if (!parent) return undefined;
  const { items, next } = page([parent, ...parent.replies], p);
  const withMetadata = flag(p.include_all_metadata);
  return {
    messages: items.map((m) => shown(m, withMetadata)),
    has_more: next !== undefined,
    response_metadata: { next_cursor: next ?? '' },
  };
}
