/**
 * Slack user groups for permission checks (`S…` ids in the config), read with
 * usergroups.users.list and cached for a short while: a click must not wait on Slack's Tier 2
 * limit, and a person removed from a group loses the right within the cache time.
 */
import type { WebClient } from '@slack/web-api';
import type { GroupDirectory } from '../policy/permissions.js';

export interface SlackGroupDirectoryOptions {
  ttlMs?: number;
  now?: () => number;
}

export class SlackGroupDirectory implements GroupDirectory {
  private readonly cache = new Map<string, { at: number; members: Promise<Set<string>> }>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: WebClient,
    options: SlackGroupDirectoryOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  async isMember(groupId: string, userId: string): Promise<boolean> {
    return (await this.members(groupId)).has(userId);
  }

  private members(groupId: string): Promise<Set<string>> {
    const cached = this.cache.get(groupId);
    if (cached && this.now() - cached.at < this.ttlMs) return cached.members;
    const members = this.client.usergroups.users
      .list({ usergroup: groupId })
      .then((r) => new Set(r.users ?? []))
      .catch((err: unknown) => {
        // A failed lookup is not cached: the next check asks Slack again.
        this.cache.delete(groupId);
        throw err;
      });
    this.cache.set(groupId, { at: this.now(), members });
    return members;
  }
}
