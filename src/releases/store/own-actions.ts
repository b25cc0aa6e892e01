/**
 * Glidepath's own actions on cluster objects, so the thread can tell them from changes made
 * outside Glidepath (kubectl, the Argo CD UI). A command writes the action before it sends the
 * patch; the reducer worker reads the actions of the objects in its batch and hands them to the
 * pure reducer as input. Per object a small sorted set (newest 50, expiring a week after the last
 * write): an action is named by what it acted on (the pod hash and step), so it never carries
 * over to a later pause nobody acted on through Glidepath.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../../store/keys.js';
import type { OwnAction } from '../reduce/own-action-keys.js';

const KEEP = 50;
const TTL_MS = 7 * 86_400_000;

export class OwnActions {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Written before the patch: the fact that shows its effect must find it. */
  async record(target: string, key: string, user: string): Promise<void> {
    const k = this.keys.ownActions(target);
    await this.redis
      .multi()
      .zadd(k, this.now(), `${key}\n${user}`)
      .zremrangebyrank(k, 0, -(KEEP + 1))
      .pexpire(k, TTL_MS)
      .exec();
  }

  /** The action was refused before anything changed: it was never taken. */
  async forget(target: string, key: string, user: string): Promise<void> {
    await this.redis.zrem(this.keys.ownActions(target), `${key}\n${user}`);
  }

  /** The recorded actions of each target (targets without any are left out). One round trip. */
  async of(targets: readonly string[]): Promise<Record<string, OwnAction[]>> {
    if (targets.length === 0) return {};
    const pipe = this.redis.pipeline();
    for (const t of targets) pipe.zrange(this.keys.ownActions(t), 0, -1);
    const results = (await pipe.exec()) ?? [];
    const out: Record<string, OwnAction[]> = {};
    targets.forEach((t, i) => {
      const [err, members] = results[i] ?? [];
      if (err || !Array.isArray(members) || members.length === 0) return;
      out[t] = (members as string[]).map((m) => {
        const at = m.indexOf('\n');
        return at < 0 ? { key: m, user: '' } : { key: m.slice(0, at), user: m.slice(at + 1) };
      });
    });
    return out;
  }
}
