/**
 * Posts that happen once even when Slack's answer is lost. Every chat.postMessage carries
 * `metadata` naming the release and the effect; before an attempt that might repeat an earlier
 * one (it failed without a clear "no", or the worker died mid-call) the writer reads the thread
 * or channel back from the time of the first such attempt and adopts the message it finds.
 * History is read only then: rarely, within a bounded window, and never to rebuild state.
 */
import { createHash } from 'node:crypto';
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';
import type { RenderedMessage } from '../render/blocks.js';

export const POST_EVENT_TYPE = 'glidepath_post';
/** The effect id under which a release's thread parent is posted. */
export const PARENT_EFFECT = 'parent';

export function parentKey(record: { pipeline: string; releaseId: string }): PostKey {
  return { pipeline: record.pipeline, releaseId: record.releaseId, effectId: PARENT_EFFECT };
}

/** What the thread keeps of the parent it sent (ThreadRef.rendered): an unchanged render sends nothing. */
export function messageDigest(message: RenderedMessage): string {
  return createHash('sha256').update(JSON.stringify(message)).digest('base64url');
}

export interface PostKey {
  pipeline: string;
  releaseId: string;
  effectId: string;
}

export interface MessageMetadata {
  event_type: string;
  event_payload: { pipeline: string; release: string; effect: string };
}

export function postMetadata(key: PostKey): MessageMetadata {
  return { event_type: POST_EVENT_TYPE, event_payload: { pipeline: key.pipeline, release: key.releaseId, effect: key.effectId } };
}

/** Slack's ts clock is not ours: look a little further back than the attempt. */
const CLOCK_SKEW_MS = 60_000;
/** Bounded read: at most this many pages of 200 messages. */
const MAX_PAGES = 5;
const PAGE_SIZE = 200;
/** An unaccounted attempt is forgotten after this long (far past any retry window). */
const ATTEMPT_TTL_MS = 8 * 24 * 3_600_000;

interface HistoryMessage {
  ts?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

function matches(m: HistoryMessage, key: PostKey): boolean {
  const p = m.metadata?.event_payload;
  return m.metadata?.event_type === POST_EVENT_TYPE && p?.pipeline === key.pipeline && p.release === key.releaseId && p.effect === key.effectId;
}

/**
 * The ts of our message for `key`, if Slack has it: conversations.replies of the thread for a
 * reply, conversations.history of the channel for a parent, from `sinceMs` on.
 */
export async function findPosted(client: WebClient, key: PostKey, where: { channel: string; threadTs?: string; sinceMs: number }): Promise<string | undefined> {
  const oldest = (Math.max(0, where.sinceMs - CLOCK_SKEW_MS) / 1000).toFixed(6);
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const args = { channel: where.channel, oldest, limit: PAGE_SIZE, include_all_metadata: true, ...(cursor ? { cursor } : {}) };
    const res = where.threadTs ? await client.conversations.replies({ ...args, ts: where.threadTs }) : await client.conversations.history(args);
    const found = (res.messages as HistoryMessage[] | undefined)?.find((m) => matches(m, key));
    if (found?.ts) return found.ts;
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) return undefined;
  }
  return undefined;
}

/** Redis side: which posts may have reached Slack unseen, and since when. */
export class PostLedger {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  private key(k: PostKey): string {
    return this.keys.slackPostAttempt(k.pipeline, k.releaseId, k.effectId);
  }

  /** The time of the first attempt that may have reached Slack, when one is unaccounted for. */
  async unaccounted(k: PostKey): Promise<number | undefined> {
    const [since, maybe] = await this.redis.hmget(this.key(k), 'since', 'maybe');
    return maybe === '1' && since ? Number(since) : undefined;
  }

  /** Written before the call: from now on, a crash or a lost answer leaves it unaccounted. */
  async begin(k: PostKey, now: number): Promise<void> {
    const key = this.key(k);
    await this.redis.multi().hsetnx(key, 'since', String(now)).hset(key, 'maybe', '1').pexpire(key, ATTEMPT_TTL_MS).exec();
  }

  /** Slack said no, or a read showed nothing landed: no attempt so far reached Slack. */
  async accountedFor(k: PostKey): Promise<void> {
    await this.redis.hset(this.key(k), 'maybe', '0');
  }

  /** The post is known (answered or adopted). */
  async done(k: PostKey): Promise<void> {
    await this.redis.del(this.key(k));
  }
}
