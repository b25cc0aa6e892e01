/**
 * The channel problems Slack reported (a channel that does not exist, or that the bot is not in),
 * kept where every replica reads them: the replica that checks a channel (the writer at start-up,
 * any replica when a template generates a pipeline) is rarely the one answering `/glidepath
 * status`. A pipeline checked again and found usable leaves the list.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { ChannelProblem } from './channels.js';

/** A day, as the check's own memory (CHANNELS_CHECKED_TTL_S): a problem fixed without a re-check is not named for ever. */
const TTL_S = 24 * 3_600;
/** Most problems listed, so a fleet of broken annotations cannot fill a status answer or a hash. */
export const CHANNEL_PROBLEMS_LISTED = 200;

const stored = z.object({ channel: z.string(), problem: z.string(), at: z.number() });

export class ChannelProblems {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  /** The outcome of one check of `checked`: their problems replace what was said of them before. */
  async record(checked: readonly { name: string }[], problems: readonly ChannelProblem[], now = Date.now()): Promise<void> {
    const bad = new Set(problems.map((p) => p.pipeline));
    const fixed = checked.map((p) => p.name).filter((name) => !bad.has(name));
    const multi = this.redis.multi();
    if (fixed.length > 0) multi.hdel(this.key, ...fixed);
    for (const p of problems) multi.hset(this.key, p.pipeline, JSON.stringify({ channel: p.channel, problem: p.problem, at: now }));
    if (problems.length > 0) multi.expire(this.key, TTL_S);
    await multi.exec();
  }

  /** What is known now, by pipeline name, at most CHANNEL_PROBLEMS_LISTED; unreadable entries are skipped. */
  async list(): Promise<(ChannelProblem & { at: number })[]> {
    const raw = await this.redis.hgetall(this.key);
    const out: (ChannelProblem & { at: number })[] = [];
    for (const [pipeline, text] of Object.entries(raw)) {
      let parsed;
      try {
        parsed = stored.safeParse(JSON.parse(text));
      } catch {
        continue;
      }
      if (parsed.success) out.push({ pipeline, ...parsed.data });
    }
    return out.sort((a, b) => (a.pipeline < b.pipeline ? -1 : 1)).slice(0, CHANNEL_PROBLEMS_LISTED);
  }
}
