/**
 * Slack profile emails for the identity map (config identities.byEmail), read with users.info
 * (the bot token needs users:read.email) and cached for the configured time: a click must not
 * wait on Slack, and a changed email is taken up within the cache time.
 */
import type { WebClient } from '@slack/web-api';
import type { SlackProfiles } from '../policy/identity.js';

const EMAIL = /^[^\s<>&@]{1,64}@[^\s<>&@]{1,190}$/;

export class SlackProfileDirectory implements SlackProfiles {
  private readonly cache = new Map<string, { at: number; email: Promise<string | undefined> }>();

  constructor(
    private readonly client: WebClient,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  email(userId: string): Promise<string | undefined> {
    const cached = this.cache.get(userId);
    if (cached && this.now() - cached.at < this.ttlMs) return cached.email;
    // Bounded by the people who act; an entry past its time is replaced, never kept beside it.
    if (this.cache.size > 10_000) this.cache.clear();
    const email = this.client.users
      .info({ user: userId })
      .then((r) => {
        const value = r.user?.profile?.email;
        // One address, nothing else: it becomes an Impersonate-User header and is quoted in Slack.
        return typeof value === 'string' && EMAIL.test(value) ? value.toLowerCase() : undefined;
      })
      .catch((err: unknown) => {
        // A failed lookup is not cached: the next attempt asks Slack again.
        this.cache.delete(userId);
        throw err;
      });
    this.cache.set(userId, { at: this.now(), email });
    return email;
  }
}
