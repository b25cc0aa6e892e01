/** Environment variables, validated with zod. Every one is listed and explained in .env.example. */
import { z } from 'zod';
import { ConfigError, formatIssues } from './errors.js';

/**
 * `name=token,name=token` pairs, each token 16+ characters; every well-formed pair is passed to
 * `add`, which may refuse it with a message. One parser for the clusters' and CI's tokens.
 */
function tokenPairs<T>(what: 'cluster' | 'pipeline', collect: (into: T, name: string, token: string) => string | undefined, empty: () => T) {
  return z
    .string()
    .default('')
    .transform((value, ctx) => {
      const out = empty();
      for (const pair of value.split(',').map((p) => p.trim()).filter(Boolean)) {
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq);
        const token = pair.slice(eq + 1);
        if (eq <= 0 || token.length === 0) {
          ctx.addIssue({ code: 'custom', message: `"${pair.slice(0, 20)}…" is not ${what}=token` });
          continue;
        }
        if (token.length < 16) {
          ctx.addIssue({ code: 'custom', message: `the token for ${what} "${name}" is shorter than 16 characters` });
          continue;
        }
        const refused = collect(out, name, token);
        if (refused) ctx.addIssue({ code: 'custom', message: refused });
      }
      return out;
    });
}

/** Ingest tokens: the token names the cluster a fact comes from. */
const ingestTokens = tokenPairs<Map<string, string>>(
  'cluster',
  (byToken, cluster, token) => {
    const other = byToken.get(token);
    // One token for two clusters would silently make them one.
    if (other !== undefined) return `clusters "${other}" and "${cluster}" have the same token; give each cluster its own`;
    byToken.set(token, cluster);
    return undefined;
  },
  () => new Map(),
);

/** Kargo API tokens per cluster (`cluster=token`): the bearer token Glidepath promotes target-aware Stages with. */
const kargoApiTokens = tokenPairs<Map<string, string>>(
  'cluster',
  (byCluster, cluster, token) => {
    if (byCluster.has(cluster)) return `cluster "${cluster}" is listed twice`;
    byCluster.set(cluster, token);
    return undefined;
  },
  () => new Map(),
);

/**
 * CI tokens, each bound to the pipelines it may announce: `pipeline=token,pipeline=token`. One
 * token may be listed for several pipelines. Kept apart from the clusters' ingest tokens, so a
 * cluster (or whoever holds its token) can never rewrite what CI announced.
 */
const ciTokens = tokenPairs<Map<string, string[]>>(
  'pipeline',
  (pipelinesByToken, pipeline, token) => {
    pipelinesByToken.set(token, [...(pipelinesByToken.get(token) ?? []), pipeline]);
    return undefined;
  },
  () => new Map(),
);

/** What this process runs: `ingest` (HTTP ingest, read API, Slack requests), `worker` (reducer and watchdog), `writer` (Slack writer). */
export const ROLES = ['ingest', 'worker', 'writer'] as const;
export type Role = (typeof ROLES)[number];

const roles = z
  .string()
  .default('all')
  .transform((value, ctx) => {
    const out = new Set<Role>();
    for (const word of value.split(',').map((w) => w.trim().toLowerCase()).filter(Boolean)) {
      if (word === 'all') ROLES.forEach((r) => out.add(r));
      else if ((ROLES as readonly string[]).includes(word)) out.add(word as Role);
      else ctx.addIssue({ code: 'custom', message: `"${word}" is not a role: use all, or a comma list of ${ROLES.join(', ')}` });
    }
    if (out.size === 0) ctx.addIssue({ code: 'custom', message: `name at least one role: all, or a comma list of ${ROLES.join(', ')}` });
    return out as ReadonlySet<Role>;
  });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

/** A bearer token: unset, or long enough that it cannot be guessed. */
const optionalToken = (name: string) => optionalString.pipe(z.string().min(16, `${name} must be at least 16 characters (or unset)`).optional());

/** `127.0.0.1:6379` parses as a URL with the scheme `127.0.0.1:`; say what form is expected. */
const redisUrl = z
  .string()
  .refine((value) => /^rediss?:\/\/[^/\s]/.test(value) && URL.canParse(value), {
    message: 'must be a Redis URL such as redis://host:6379 (or rediss:// for TLS, redis://:password@host:6379/0)',
  });

/** `host:port,host:port` (Redis Cluster seed nodes, Sentinels). */
const hostPorts = (name: string) =>
  optionalString.transform((value, ctx) => {
    if (value === undefined) return undefined;
    const out: { host: string; port: number }[] = [];
    for (const item of value.split(',').map((v) => v.trim()).filter(Boolean)) {
      const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/.exec(item);
      const port = Number(m?.[2]);
      if (!m || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `${name}: "${item.slice(0, 40)}" is not host:port (e.g. redis-0.redis:6379,redis-1.redis:6379)` });
        continue;
      }
      out.push({ host: (m[1] as string).replace(/^\[|\]$/g, ''), port });
    }
    if (out.length === 0) ctx.addIssue({ code: 'custom', message: `${name}: name at least one host:port` });
    return out;
  });

const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  /**
   * Namespace of every Redis key. Plain (`glidepath`): keys are tagged per pipeline and per fact
   * partition, so the work spreads over a Redis Cluster's shards. In braces (`{glidepath}`): every
   * key in that one slot (the layout before partitions).
   */
  REDIS_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_.-]+|\{[A-Za-z0-9_.-]+\})$/, 'must be a plain namespace such as glidepath (letters, digits, _ . -), or one in braces such as {glidepath} to keep every key in one slot')
    .default('glidepath'),
  /** Redis Cluster seed nodes (`host:port,…`); set, Glidepath talks to the cluster and REDIS_URL only lends its user, password and TLS. */
  REDIS_CLUSTER_NODES: hostPorts('REDIS_CLUSTER_NODES'),
  /** Sentinels (`host:port,…`) watching the master named REDIS_SENTINEL_MASTER; set, REDIS_URL's host is ignored. */
  REDIS_SENTINELS: hostPorts('REDIS_SENTINELS'),
  REDIS_SENTINEL_MASTER: optionalString,
  REDIS_SENTINEL_PASSWORD: optionalString,
  /** ACL user and password; override those in REDIS_URL (a password is easier to keep in a Secret on its own). */
  REDIS_USERNAME: optionalString,
  REDIS_PASSWORD: optionalString,
  /** TLS without rediss:// (cluster nodes, Sentinel-announced masters); rediss:// turns it on too. */
  REDIS_TLS: flag,
  /** PEM files: the CA that signed the server's certificate, and a client certificate and key for mutual TLS. */
  REDIS_TLS_CA_FILE: optionalString,
  REDIS_TLS_CERT_FILE: optionalString,
  REDIS_TLS_KEY_FILE: optionalString,
  /**
   * Fact partitions: facts of one pipeline always go to the same partition, and each worker
   * replica works only the partitions it holds a lease on, so one release is reduced by one
   * process at a time. Stored in Redis with the key layout: changing it needs drained queues.
   */
  FACT_PARTITIONS: z.coerce.number().int().min(1).max(256).default(1),
  /** A worker replica that stops renewing its partition leases loses them after this long. */
  PARTITION_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
  GLIDEPATH_CONFIG: optionalString,
  GLIDEPATH_ROLE: roles,
  /**
   * Completed fact jobs kept per partition to look at; deduplication does not depend on them. A
   * job is a batch of up to 128 facts (~1.3 KB each): 200 jobs are at most ~33 MB of Redis per
   * partition (failed ones are kept up to 200 too, for a week).
   */
  FACT_JOBS_KEEP_COMPLETED: z.coerce.number().int().min(0).max(1_000_000).default(200),
  /**
   * Backpressure: once this many facts wait in the queues for a reducer (over the partitions),
   * the webhooks and /v1/releases answer 503 with Retry-After instead of queueing more; 0: no
   * bound. 10,000 facts are ~20 MB of Redis and some seconds of a worker's work.
   */
  INGEST_MAX_QUEUED_FACTS: z.coerce.number().int().min(0).max(10_000_000).default(10_000),
  /** On SIGTERM, how long /readyz fails before the process stops accepting requests (load balancers take it out meanwhile). */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(120_000).default(5_000),
  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_API_URL: optionalString.pipe(z.string().url().optional()),
  /** Workspace-wide chat.update budget of the Slack writer (Slack's Tier 3 is 50+/min). */
  SLACK_UPDATES_PER_MINUTE: z.coerce.number().positive().max(1000).default(50),
  /** chat.postMessage budget per channel (Slack allows about one message per second per channel). */
  SLACK_POSTS_PER_CHANNEL_PER_MINUTE: z.coerce.number().positive().max(600).default(60),
  /** conversations.history/.replies reads that settle an ambiguous post (Tier 3 for internal apps). */
  SLACK_HISTORY_READS_PER_MINUTE: z.coerce.number().positive().max(600).default(40),
  /** How long the Slack writer keeps retrying a failing call (5xx, connection, timeout) before giving up. */
  SLACK_RETRY_MAX_HOURS: z.coerce.number().positive().max(24 * 30).default(24),
  /** First backoff of a failing Slack call; doubles on each failure up to SLACK_RETRY_CAP_SECONDS. */
  SLACK_RETRY_BASE_MS: z.coerce.number().int().positive().max(600_000).default(1_000),
  SLACK_RETRY_CAP_SECONDS: z.coerce.number().positive().max(3_600).default(300),
  INGEST_TOKENS: ingestTokens,
  CI_TOKENS: ciTokens,
  /** `cluster=token,…`: Kargo API tokens of the clusters whose config has kargoApi.url (src/config/kargo-api.ts). */
  KARGO_API_TOKENS: kargoApiTokens,
  API_READ_TOKEN: optionalToken('API_READ_TOKEN'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Facts in hand at once per process, counted as jobs of 16 (a worker holds REDUCER_CONCURRENCY
   * / 16 jobs; a job carries up to 128 facts, so a backlog can put up to 8x as many in hand).
   * Facts of one release wait for each other and are reduced in one batch (one read, one
   * compare-and-set, one save), so the more are taken, the larger the batches a backlog makes.
   * 512 (32 jobs): bench:ingest reduces as fast as at 1,024 (ratio 0.94-1.02 against 0.93-1.00)
   * with its workers' peak RSS at 195-198 MB instead of 199-207; bench:watch 1.00x, lag p99 177 ms.
   */
  REDUCER_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(512),
  /**
   * How far (%) the JS heap may grow past what was live at the last full collection before V8
   * collects again (src/wiring/garbage-collection.ts); 0: V8's own, up to ~300%. 25 keeps bench:ingest's
   * peak RSS at ~141 MB (ingest) and ~198 MB (workers) instead of ~227 and ~358 MB.
   */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(1_000).default(25),
  /** BullMQ job lock: a worker that dies mid-job has its job retried about this long after. */
  JOB_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /**
   * The Slack writer's job lock, and the TTL of its thread lock and reply claims (each renewed
   * every half of it while held). A paused writer loses them this long after its last renewal, and
   * its job is handed to another writer at the next stalled check (every half of it): short,
   * because a render held by a stopped process keeps the thread's parent stale meanwhile.
   */
  SLACK_JOB_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),
  /** Largest accepted request body, in bytes. */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
  /** Bearer token for GET /metrics; unset, /metrics is open to anyone who can reach the port. */
  METRICS_TOKEN: optionalToken('METRICS_TOKEN'),
  /** Largest accepted body on /slack/events (read before the signature can be checked); Slack's are a few KiB. */
  SLACK_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(4 * 1024 * 1024).default(64 * 1024),
  /** Open connections the HTTP server accepts; more are closed at once. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(1024),
  /** Time allowed to receive a request's headers. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Time allowed to receive a whole request (headers and body); slower requests get a 408. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** Idle time before a keep-alive connection is closed; behind a load balancer, set it above the balancer's idle timeout. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
});

export type Env = z.infer<typeof envSchema>;

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const result = envSchema.safeParse(source);
  if (!result.success) throw new ConfigError('environment', formatIssues(result.error));
  // A token that is both would let a cluster announce releases: CI gets tokens of its own.
  const shared = [...result.data.CI_TOKENS.keys()].filter((token) => result.data.INGEST_TOKENS.has(token));
  if (shared.length > 0) {
    throw new ConfigError(
      'environment',
      shared.map((t) => `CI_TOKENS: the token of pipeline(s) ${result.data.CI_TOKENS.get(t)?.join(', ')} is also the ingest token of cluster "${result.data.INGEST_TOKENS.get(t)}"; give CI a token of its own`),
    );
  }
  if (result.data.REDIS_SENTINELS && !result.data.REDIS_SENTINEL_MASTER) {
    throw new ConfigError('environment', ['REDIS_SENTINEL_MASTER: name the master the Sentinels watch (REDIS_SENTINELS is set)']);
  }
  if (result.data.REDIS_SENTINELS && result.data.REDIS_CLUSTER_NODES) {
    throw new ConfigError('environment', ['REDIS_CLUSTER_NODES and REDIS_SENTINELS: set one of them (a Redis Cluster or a Sentinel-managed master)']);
  }
  if (Boolean(result.data.REDIS_TLS_CERT_FILE) !== Boolean(result.data.REDIS_TLS_KEY_FILE)) {
    throw new ConfigError('environment', ['REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE: a client certificate needs its key (set both or neither)']);
  }
  return result.data;
}
