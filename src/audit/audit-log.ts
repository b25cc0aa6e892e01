/**
 * The audit stream: every action a person attempts through Glidepath (allowed, denied, failed,
 * done), appended to a Redis stream and never edited. On a cluster with `authorization: config`
 * the Kubernetes actor is Glidepath's service account, so this is the only record of who did
 * what; elsewhere each entry also names the Kubernetes identity the write was sent as (`sentAs`),
 * the one the cluster's own audit log shows.
 */
import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { z } from 'zod';
import type { ConfigFile } from '../config/file.js';
import type { Keys } from '../store/keys.js';

export const auditResults = ['allowed', 'denied', 'failed', 'done'] as const;
export type AuditResult = (typeof auditResults)[number];

export interface AuditEntry {
  /** Slack user id and display name of the person. */
  actor: { slackUserId: string; name?: string };
  /** The Kubernetes user and groups the write was (or would have been) sent as; absent: Glidepath's own service account. */
  sentAs?: { user: string; groups: string[] };
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
  /** Each gate's decision, in the order the engine asked them (src/actions/gates.ts). */
  gates?: AuditGate[];
  /** Why, in the person's words, when the request carried a reason. */
  requestReason?: string;
  before?: unknown;
  after?: unknown;
}

/** A gate's decision as audited: which gate, whether it let the action through, and why. */
export interface AuditGate {
  gate: string;
  allowed: boolean;
  via?: string;
  reason?: string;
  [detail: string]: unknown;
}

export interface StoredAuditEntry extends AuditEntry {
  id: string;
  at: string;
}

const storedEntry = z.object({
  actor: z.object({ slackUserId: z.string(), name: z.string().optional() }),
  sentAs: z.object({ user: z.string(), groups: z.array(z.string()) }).optional(),
  action: z.string(),
  target: z.string(),
  result: z.enum(auditResults),
  reason: z.string().optional(),
  pipeline: z.string().optional(),
  stage: z.string().optional(),
  releaseId: z.string().optional(),
  gates: z.array(z.object({ gate: z.string(), allowed: z.boolean(), via: z.string().optional(), reason: z.string().optional() }).passthrough()).optional(),
  requestReason: z.string().optional(),
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

/**
 * Bounds of the stream: it keeps about `maxEntries` entries, and a person's denied attempts
 * beyond `deniedPerUserPerMinute` in a minute are counted, not written (so someone repeating a
 * denied command cannot grow Redis; the first ones of each minute still say who tried what).
 */
export interface AuditLimits {
  maxEntries: number;
  deniedPerUserPerMinute: number;
  /** Redis key counting a person's denied attempts of the current minute (keys.auditDeniedCount). */
  deniedCountKey?: (slackUserId: string) => string;
  /** Called for each denied attempt not written. */
  onDeniedDropped?: () => void;
}

export const DEFAULT_AUDIT_LIMITS: AuditLimits = { maxEntries: 100_000, deniedPerUserPerMinute: 10 };

/*
 * KEYS[1] stream, KEYS[2] denied counter of the person; ARGV[1] entry JSON, ARGV[2] MAXLEN,
 * ARGV[3] denied attempts allowed per window ("0": not a denied entry), ARGV[4] window ms.
 * Returns the stream id, or false when the denied attempt was over the limit.
 */
const APPEND_SCRIPT = `
if ARGV[3] ~= '0' then
  local n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
  if n > tonumber(ARGV[3]) then return false end
end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'entry', ARGV[1])
`;

type RedisWithScripts = Redis & { glidepathAuditAppend(stream: string, counter: string, entry: string, maxLen: string, limit: string, windowMs: string): Promise<string | null> };

/** The counter of denied attempts not written, shared by every AuditLog on one registry. */
export function auditDroppedCounter(registry: Registry): Counter {
  const name = 'glidepath_audit_denied_dropped_total';
  return (
    (registry.getSingleMetric(name) as Counter | undefined) ??
    new Counter({ name, help: 'Denied attempts not written to the audit stream (over the per-person limit per minute)', registers: [registry] })
  );
}

/** The limits the config asks for, counting dropped denied attempts on `registry` when given. */
export function auditLimits(config: ConfigFile, keys: Keys, registry?: Registry): AuditLimits {
  const dropped = registry ? auditDroppedCounter(registry) : undefined;
  return {
    maxEntries: config.settings.auditMaxEntries,
    deniedPerUserPerMinute: config.settings.auditDeniedPerUserPerMinute,
    deniedCountKey: (user) => keys.auditDeniedCount(user),
    onDeniedDropped: dropped ? () => dropped.inc() : undefined,
  };
}

export class AuditLog {
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly key: string,
    private readonly now: () => Date = () => new Date(),
    private readonly limits: AuditLimits = DEFAULT_AUDIT_LIMITS,
  ) {
    if (!('glidepathAuditAppend' in redis)) redis.defineCommand('glidepathAuditAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
    this.redis = redis as RedisWithScripts;
  }

  /** Appends one entry and returns its stream id; undefined when a denied attempt was over the limit. */
  async append(entry: AuditEntry): Promise<string | undefined> {
    const at = this.now().toISOString();
    const counter = this.limits.deniedCountKey?.(entry.actor.slackUserId);
    const limited = entry.result === 'denied' && counter !== undefined;
    const id = await this.redis.glidepathAuditAppend(
      this.key,
      counter ?? this.key,
      JSON.stringify({ ...entry, at }),
      String(this.limits.maxEntries),
      limited ? String(this.limits.deniedPerUserPerMinute) : '0',
      '60000',
    );
    if (id === null) this.limits.onDeniedDropped?.();
    return id ?? undefined;
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
