/**
 * Which of a cluster's lists go first. A child Application's fact is placed by its ApplicationSet's
 * step membership (src/releases/store/appset-memberships.ts), known only once the ApplicationSet's fact
 * was reduced; listed together, a child can open its release first, and that release's first
 * thread says "step membership not known yet" in every step row. So the ApplicationSets lead: a
 * leader's list that is due (the first one, after a 410, a resync) makes its followers' lists (the
 * Applications of its namespace) wait until the leader's objects are queued. Queued first is
 * reduced first for one pipeline: one partition, one replica, jobs taken in order, and an
 * ApplicationSet's membership written before a child started after it reads it (appset-memberships).
 *
 * Bounded: a leader whose list fails (an outage, RBAC) holds its followers at most `maxWaitMs`
 * from when its list fell due, then they go on (their facts are placed as before the ApplicationSet
 * was heard, and corrected when it is); a leader still failing holds no later list.
 */
import type { WatchScope } from './scopes.js';

export class ListOrder {
  /** Leaders whose list is due and not queued yet: since when. */
  private readonly due = new Map<string, number>();
  private readonly waiting = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly maxWaitMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A leader's list is due (call before it lists; the first time, before any follower starts). */
  listDue(leader: string): void {
    if (!this.due.has(leader)) this.due.set(leader, this.now());
  }

  /** A leader's list is queued (its objects are in the facts queue): its followers may list. */
  listQueued(leader: string): void {
    if (!this.due.delete(leader)) return;
    this.wake();
  }

  /** Whether a follower should wait now: some leader's list is due, for less than `maxWaitMs`. */
  private leftMs(): number {
    let left = 0;
    const now = this.now();
    for (const since of this.due.values()) left = Math.max(left, since + this.maxWaitMs - now);
    return left;
  }

  /** Resolves when a follower may list: no leader's list is due, or the due ones waited long enough. */
  async ready(): Promise<void> {
    for (;;) {
      const left = this.leftMs();
      if (this.closed || left <= 0) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.waiting.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        timer.unref();
        this.waiting.add(done);
      });
    }
  }

  /** Releases every follower waiting (the watches stop). */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    for (const done of [...this.waiting]) done();
  }
}

/** A scope's part in the order: the ApplicationSets lead; the Applications of their namespaces (their children among them) follow. */
export function listRole(scope: WatchScope, all: readonly WatchScope[]): { leader: string } | 'follower' | undefined {
  if (scope.resource.kind === 'ApplicationSet') return { leader: `${scope.namespace}|${scope.fieldSelector ?? ''}` };
  if (scope.resource.kind === 'Application' && all.some((s) => s.resource.kind === 'ApplicationSet' && s.namespace === scope.namespace)) return 'follower';
  return undefined;
}
