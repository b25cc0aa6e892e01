/**
 * The audit stream: every action a person attempts through Glidepath (allowed, denied, failed,
 * done). The Kubernetes actor is Glidepath's service account, so this is the only record of
 * who did what: entries are appended to a Redis stream and never edited.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';

export const auditResults = ['allowed', 'denied', 'failed', 'done'] as const;
export type AuditResult = (typeof auditResults)[number];

export interface AuditEntry {
  /** Slack user id and display name of the person. */
  actor: { slackUserId: string; name?: string };
  /** The verb as the person used it: approve, abort, promote, refresh, … */
  action: string;
  /** What it was aimed at, e.g. `prod/shop/checkout` or `checkout@prod`. */
  target: string;
  result: AuditResult;
  /** Why (denied or failed), or what happened (done). */
  reason?: string;
  pipeline?: string;
  stage?: string;
  releaseId?: string;
  before?: unknown;
  after?: unknown;
}

export interface StoredAuditEntry extends AuditEntry {
  id: string;
  at: string;
}

const storedEntry = z.object({
  actor: z.object({ slackUserId: z.string(), name: z.string().optional() }),
  action: z.string(),
  target: z.string(),
  result: z.enum(auditResults),
  reason: z.string().optional(),
  pipeline: z.string().optional(),
  stage: z.string().optional(),
  releaseId: z.string().optional(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  at: z.string(),
});

export interface AuditQuery {
  limit?: number;
  /** Only entries older than this stream id (for paging backwards). */
  before?: string;
  actor?: string;
  action?: string;
}

export class AuditLog {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Appends one entry and returns its stream id. */
  async append(entry: AuditEntry): Promise<string> {
    const at = this.now().toISOString();
    const id = await this.redis.xadd(this.key, '*', 'entry', JSON.stringify({ ...entry, at }));
    return id as string;
  }

  /** Newest first. */
  async list(query: AuditQuery = {}): Promise<StoredAuditEntry[]> {
    const limit = Math.min(Math.max(query.limit ?? 100, 1), 1000);
    const out: StoredAuditEntry[] = [];
    let end = query.before ? `(${query.before}` : '+';
    // Filters are applied while paging, so a filtered page is still full when it can be.
    while (out.length < limit) {
      const rows = await this.redis.xrevrange(this.key, end, '-', 'COUNT', Math.max(limit, 100));
      if (rows.length === 0) break;
      for (const [id, fields] of rows) {
        const raw = fields[fields.indexOf('entry') + 1];
        const parsed = storedEntry.safeParse(raw ? JSON.parse(raw) : undefined);
        if (!parsed.success) continue;
        const e = parsed.data;
        if (query.actor && e.actor.slackUserId !== query.actor) continue;
        if (query.action && e.action !== query.action) continue;
        out.push({ id, ...e });
        if (out.length === limit) break;
      }
      end = `(${rows[rows.length - 1]![0]}`;
    }
    return out;
  }
}
