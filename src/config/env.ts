/** Environment variables, validated with zod. Every one is listed and explained in .env.example. */
import { z } from 'zod';
import { ConfigError, formatIssues } from './errors.js';

const ingestTokens = z
  .string()
  .default('')
  .transform((value, ctx) => {
    const byToken = new Map<string, string>();
    for (const pair of value.split(',').map((p) => p.trim()).filter(Boolean)) {
      const eq = pair.indexOf('=');
      const cluster = pair.slice(0, eq);
      const token = pair.slice(eq + 1);
      if (eq <= 0 || token.length === 0) {
        ctx.addIssue({ code: 'custom', message: `"${pair.slice(0, 20)}…" is not cluster=token` });
        continue;
      }
      if (token.length < 16) {
        ctx.addIssue({ code: 'custom', message: `the token for cluster "${cluster}" is shorter than 16 characters` });
        continue;
      }
      byToken.set(token, cluster);
    }
    return byToken;
  });

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

export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key; the braces make it a Redis Cluster hash tag. */
  REDIS_PREFIX: z
    .string()
    .regex(/^\{[A-Za-z0-9_.-]+\}$/, 'must be a hash tag such as {glidepath}')
    .default('{glidepath}'),
  GLIDEPATH_CONFIG: optionalString,
  GLIDEPATH_ROLE: roles,
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
  INGEST_TOKENS: ingestTokens,
  API_READ_TOKEN: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Facts reduced at once per process; facts of one release are batched, so this can be high. */
  REDUCER_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(128),
  /** BullMQ job lock: a worker that dies mid-job has its job retried about this long after. */
  JOB_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /** Largest accepted request body, in bytes. */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
});

export type Env = z.infer<typeof envSchema>;

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const result = envSchema.safeParse(source);
  if (!result.success) throw new ConfigError('environment', formatIssues(result.error));
  return result.data;
}
