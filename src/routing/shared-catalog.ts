/**
 * The generated pipelines shared between replicas. A replica derives its pipelines from the
 * objects it sees (src/routing/catalog.ts), but only the watch's lease holder sees every object,
 * and a writer or a Slack replica sees none: what a replica generates or retires is written to
 * one Redis hash (the template and the group's bindings, so every replica fills the same
 * pipeline), a counter beside it says when it changed, and every replica reloads it when the
 * counter moves (and at once when asked for a name it does not know).
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../obs/logger.js';
import type { Keys } from '../store/keys.js';
import type { GeneratedPipeline, PipelineCatalog, SharedPipeline } from './catalog.js';

const stringRecord = z.record(z.string(), z.string());
const sharedPipelineSchema = z.object({
  template: z.string(),
  bindings: z.object({ value: z.string(), namespace: z.string(), cluster: z.string(), labels: stringRecord, annotations: stringRecord }),
  channel: z.string(),
  channelFrom: z.enum(['template', 'annotation']),
  retiredAt: z.number().optional(),
});

export interface SharedCatalogOptions {
  redis: Redis;
  keys: Keys;
  catalog: PipelineCatalog;
  /** How long a retired pipeline stays found by name, and the record's TTL: the longest release TTL. */
  ttlMs: number;
  logger: Logger;
  pollMs?: number;
  now?: () => number;
}

export class SharedCatalog {
  private version: string | null | undefined;
  private timer?: NodeJS.Timeout;
  private loading?: Promise<void>;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: SharedCatalogOptions) {
    o.catalog.remote = this;
    o.catalog.onChange((g, change) => this.publish(g, change));
  }

  /** Loads the record now, then whenever its counter moves. */
  async start(): Promise<void> {
    await this.refresh().catch((err: unknown) => this.o.logger.warn({ err: (err as Error).message }, 'the shared generated pipelines could not be read; retried'));
    const tick = (): void => {
      this.timer = setTimeout(() => void this.poll().finally(() => this.timer && tick()), this.o.pollMs ?? 2_000);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writes;
  }

  /** Reads the record when its counter moved since the last read (one GET otherwise). */
  async refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async poll(): Promise<void> {
    await this.refresh().catch((err: unknown) => this.o.logger.debug({ err: (err as Error).message }, 'shared generated pipelines: read failed'));
  }

  private async load(): Promise<void> {
    const { redis, keys } = this.o;
    const version = await redis.get(keys.generatedPipelinesVersion());
    if (version === this.version && version !== null) return;
    const raw = await redis.hgetall(keys.generatedPipelines());
    const now = (this.o.now ?? Date.now)();
    const shared = new Map<string, SharedPipeline>();
    const expired: string[] = [];
    for (const [name, text] of Object.entries(raw)) {
      const parsed = sharedPipelineSchema.safeParse(safeJson(text));
      if (!parsed.success) continue;
      const entry = parsed.data;
      if (entry.retiredAt !== undefined && now - entry.retiredAt > this.o.ttlMs) expired.push(name);
      else shared.set(name, { template: entry.template, bindings: entry.bindings, channel: entry.channel, channelFrom: entry.channelFrom, ...(entry.retiredAt !== undefined ? { retiredAt: entry.retiredAt } : {}) });
    }
    // Retired pipelines whose threads have all expired leave the record.
    if (expired.length > 0) await redis.hdel(keys.generatedPipelines(), ...expired);
    this.o.catalog.adopt(shared);
    this.version = version;
  }

  private publish(g: GeneratedPipeline, change: 'generated' | 'retired'): void {
    const { redis, keys } = this.o;
    const entry: SharedPipeline = { template: g.template, bindings: g.bindings, channel: g.pipeline.channel, channelFrom: g.channelFrom, ...(change === 'retired' ? { retiredAt: (this.o.now ?? Date.now)() } : {}) };
    const ttlS = Math.ceil(this.o.ttlMs / 1000);
    this.writes = this.writes
      .then(() =>
        redis
          .multi()
          .hset(keys.generatedPipelines(), g.pipeline.name, JSON.stringify(entry))
          .expire(keys.generatedPipelines(), ttlS)
          .incr(keys.generatedPipelinesVersion())
          .expire(keys.generatedPipelinesVersion(), ttlS)
          .exec(),
      )
      // Lost here, written again by the next change or the next replica to see the group.
      .catch((err: unknown) => this.o.logger.warn({ pipeline: g.pipeline.name, err: (err as Error).message }, 'a generated pipeline could not be shared with the other replicas'));
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
