/**
 * The writer: consumes the "slack" queue and keeps each release's thread true to its record.
 * Parent first and exactly once (a Redis lock around chat.postMessage, the ts saved before the
 * lock is released), parent edits only when the render changed, replies once per effect id,
 * every call inside a shared Slack budget, and a job that must wait is moved to BullMQ's delayed
 * set instead of holding a worker.
 */
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { PipelineConfig } from '../../config/file.js';
import { FINISHED_RELEASE_STATUSES, type ReleaseRecord } from '../../releases/record/record.js';
import { renderParent } from '../render/parent.js';
import { renderReply, renderSettledReply } from '../render/reply.js';
import { markLate } from '../render/late.js';
import type { ThreadReplyEffect, ThreadSettleEffect } from '../render/types.js';
import { withoutRetries } from '../client.js';
import { DEFAULT_BUDGETS, SlackBudgets, type BudgetSpec, type WriterBudgets } from './budget.js';
import { SLACK_QUEUE, needsPerson, type ReplyProduced, type SlackJob } from './jobs.js';
import { queueCharts, uploadCharts, type ChartCalls } from './chart-upload.js';
import { lateReply } from './late-reply.js';
import { PARENT_EFFECT, PostLedger, findPosted, messageDigest, parentKey, postMetadata, type PostKey } from './post-ledger.js';
import { DEFAULT_RETRY, backoffMs, type RetryPolicy } from './retry.js';
import { ParentGoneError, classifySlackError, mayHaveLanded } from './slack-errors.js';
import { ThreadStore, type ThreadRef } from './threads.js';
import { DEFAULT_SLACK_JOB_LOCK_MS, writerLockOptions, type SlackWriterOptions } from './writer-options.js';
import { FencedSlackError, jobLockHeld, requestRepair } from './writer-fence.js';

export { DEFAULT_BUDGETS, type WriterBudgets } from './budget.js';
export type { SlackWriterOptions } from './writer-options.js';
const LOCK_BUSY_RETRY_MS = 200;
interface JobContext {
  job: Job<SlackJob>;
  token: string | undefined;
  record: ReleaseRecord;
}

export class SlackWriter {
  private readonly threads: ThreadStore;
  private readonly budgets: SlackBudgets;
  private readonly spec: WriterBudgets;
  private readonly log: Logger;
  private readonly ledger: PostLedger;
  private readonly retry: RetryPolicy;
  /** Our job owns retries: the client makes each call once (a retried post could post twice). */
  private readonly client: WebClient;
  /** The job lock, and the TTL of the thread lock and reply claims: all renewed while held, all lost soon by a stopped writer. */
  private readonly lockMs: number;
  private worker: Worker<SlackJob> | undefined;
  private counts: Queue<SlackJob> | undefined;

  constructor(private readonly options: SlackWriterOptions) {
    this.threads = new ThreadStore(options.redis, options.keys, options.finishedTtlMs, options.unfinishedTtlMs);
    this.budgets = new SlackBudgets(options.redis, options.keys, options.now);
    this.spec = options.budgets ?? DEFAULT_BUDGETS;
    this.log = options.logger.child({ component: 'slack-writer' });
    this.ledger = new PostLedger(options.redis, options.keys);
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.client = withoutRetries(options.client, options.callTimeoutMs);
    this.lockMs = options.jobLockMs ?? DEFAULT_SLACK_JOB_LOCK_MS;
  }

  start(): Worker<SlackJob> {
    const worker = new Worker<SlackJob>(SLACK_QUEUE, (job, token) => this.process(job, token), {
      connection: this.options.connection,
      prefix: this.options.keys.queuePrefix('slack'),
      concurrency: this.options.concurrency ?? 8,
      ...writerLockOptions(this.lockMs),
      // A worker killed mid-job leaves it stalled; it comes back (and settles its post by
      // metadata) instead of failing after the first stall.
      maxStalledCount: 50,
    });
    this.counts = new Queue<SlackJob>(SLACK_QUEUE, { connection: this.options.connection, prefix: this.options.keys.queuePrefix('slack') });
    this.counts.on('error', () => undefined);
    this.options.metrics.watch({ queue: this.counts, redis: this.options.redis, keys: this.options.keys });
    worker.on('failed', (job, err) => {
      if (err instanceof DelayedError || err.name === 'DelayedError' || err instanceof FencedSlackError) return;
      const final = err instanceof UnrecoverableError || (job !== undefined && job.attemptsMade >= (job.opts.attempts ?? 1));
      const fields = { jobId: job?.id, job: job?.data.type, pipeline: job?.data.pipeline, release: job?.data.releaseId, attempts: job?.attemptsMade, err: err.message };
      if (final) this.log.error(fields, 'Slack job gave up');
      else this.log.warn(fields, 'Slack job failed; BullMQ retries it with backoff');
    });
    // A job lock lost while paused ("could not renew lock", "Missing lock … moveToFinished") is the fence at work, said at warn like a lost lease.
    worker.on('error', (err) => (/\block for job\b/i.test(err.message) ? this.log.warn({ err: err.message }, 'Slack writer lost a job lock; another writer has the job') : this.log.error({ err: err.message }, 'Slack writer worker error')));
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.counts?.close();
  }

  async process(job: Job<SlackJob>, token: string | undefined): Promise<void> {
    const { pipeline: pipelineName, releaseId } = job.data;
    const record = await this.options.releases.get(pipelineName, releaseId);
    if (!record) {
      this.log.warn({ pipeline: pipelineName, release: releaseId, job: job.data.type }, 'release record is gone (expired?); nothing to send');
      return;
    }
    const pipeline = await this.options.pipeline(pipelineName);
    if (!pipeline) {
      this.log.warn({ pipeline: pipelineName, release: releaseId }, 'pipeline is no longer configured; nothing to send');
      return;
    }
    const ctx: JobContext = { job, token, record };
    if (job.data.type === 'parent') await this.sendParent(ctx, pipeline);
    else if (job.data.type === 'settle') for (const effect of job.data.effects) await this.settleReply(ctx, effect);
    else if (job.data.type === 'chart') await uploadCharts({ client: this.client, threads: this.threads, lockMs: this.lockMs, record }, job.data, this.chartCalls(ctx));
    else for (const effect of job.data.effects) await this.sendReply(ctx, pipeline, effect, job.data.produced);
    if (job.data.retry) await this.options.redis.zrem(this.options.keys.slackRetrying(), String(job.id));
  }

  private async sendParent(ctx: JobContext, pipeline: PipelineConfig): Promise<void> {
    const { pipeline: name, releaseId } = ctx.record;
    const { created } = await this.ensureParent(ctx, pipeline);
    if (created) return;
    // One edit of a thread at a time, and the record is read inside the lock: whichever edit
    // lands last was rendered from the newest record, so Slack never ends on an older state.
    const lock = await this.threads.lock(name, releaseId, this.lockMs);
    if (!lock) return this.reschedule(ctx, LOCK_BUSY_RETRY_MS);
    try {
      const [record, thread] = await Promise.all([this.options.releases.get(name, releaseId), this.threads.get(name, releaseId)]);
      if (!record || !thread) return;
      const message = renderParent(record, pipeline, this.options.frozenStages?.(pipeline));
      const digest = messageDigest(message);
      // A repair (see below) edits even when the digest says Slack shows this render already.
      if ((!(ctx.job.data.type === 'parent' && ctx.job.data.force) && thread.rendered === digest) || (thread.version ?? -1) > record.version) {
        this.options.metrics.unchangedSkipped.inc();
        return;
      }
      await this.spend(ctx, 'update', this.spec.update, { book: true });
      // The budget may have kept us waiting: the lock must still be ours, and nobody sent a newer render meanwhile.
      const check = await this.threads.checkLock(name, releaseId, lock, this.lockMs, record.version);
      if (check === 'moved-past') return void this.options.metrics.unchangedSkipped.inc();
      if (check === 'lock-lost') throw this.fenced(ctx, 'thread', 'the thread lock expired before chat.update');
      try {
        await this.call(ctx, 'chat.update', 'update', () =>
          this.client.chat.update({ channel: thread.channel, ts: thread.ts, text: message.text, blocks: message.blocks as never, metadata: postMetadata(parentKey(ctx.record)) }),
        );
      } catch (err) {
        if (err instanceof ParentGoneError) {
          // Someone deleted the parent: start a new thread on the retry rather than never updating again.
          await this.threads.forget(name, releaseId);
          throw new Error('the thread parent was deleted in Slack; a new one is posted on retry', { cause: err });
        }
        throw err;
      }
      if ((await this.threads.markRendered(name, releaseId, digest, record.version, lock)) === 'lock-lost') {
        // Paused between the check and the edit: our older render may have landed over a newer
        // one. Whoever renders next must edit, whatever the digest says (a forced render).
        if (this.counts) await requestRepair(this.counts, name, releaseId);
        throw this.fenced(ctx, 'thread', 'the thread lock expired during chat.update; a forced render repairs the parent');
      }
      await this.threads.expireWhenFinished(name, releaseId, FINISHED_RELEASE_STATUSES.includes(record.status));
    } finally {
      await this.threads.unlock(name, releaseId, lock);
    }
  }

  private async sendReply(ctx: JobContext, pipeline: PipelineConfig, effect: ThreadReplyEffect, produced: ReplyProduced | undefined): Promise<void> {
    const { record } = ctx;
    if (await this.threads.replied(record.pipeline, record.releaseId, effect.id)) return;
    const { thread } = await this.ensureParent(ctx, pipeline);
    const urgent = needsPerson(effect);
    const budget = `post:${thread.channel}`;
    // Routine replies leave one message of the channel's burst to replies a person waits on.
    await this.spend(ctx, budget, this.spec.postPerChannel, urgent ? { book: true } : { book: false, reserve: Math.min(1, this.spec.postPerChannel.burst - 1) });
    // The same effect can reach the queue twice (the reducer's outbox is at-least-once).
    const claim = await this.threads.claimReply(record.pipeline, record.releaseId, effect.id, this.lockMs);
    if (!claim) return this.reschedule(ctx, LOCK_BUSY_RETRY_MS);
    try {
      // Both read at once (one round trip); a pause that ended before its reply went out: the reply goes out without buttons.
      const [replied, { settled }, shown] = await Promise.all([this.threads.replied(record.pipeline, record.releaseId, effect.id), this.threads.replyMessage(record.pipeline, record.releaseId, effect.id), this.threads.get(record.pipeline, record.releaseId)]);
      if (replied) return;
      const key: PostKey = { pipeline: record.pipeline, releaseId: record.releaseId, effectId: effect.id };
      // Once a reply below said the release ended, a reply of an older record says it came before (late-reply.ts).
      const message = markLate(settled ? renderSettledReply(effect, record, settled) : renderReply(effect, record), lateReply(produced, shown?.ended));
      if (!(await this.threads.holdsReply(record.pipeline, record.releaseId, effect.id, claim, this.lockMs))) throw this.fenced(ctx, 'reply', `the claim on reply ${effect.id} expired before chat.postMessage`);
      const posted = await this.postOnce(ctx, key, { channel: thread.channel, threadTs: thread.ts, budget }, () =>
        this.client.chat.postMessage({ channel: thread.channel, thread_ts: thread.ts, text: message.text, blocks: message.blocks as never, metadata: postMetadata(key) }),
      );
      // Buttons are taken away later (settleReply): keep where they are.
      if (message.blocks.some((b) => b.type === 'actions')) await this.threads.saveReplyTs(record.pipeline, record.releaseId, effect.id, posted.ts);
      if (this.counts) await queueCharts(this.counts, record, effect, pipeline, produced); // before the mark: a retry that adopts the post queues them again
      await this.threads.markReplied(record.pipeline, record.releaseId, effect.id);
      await this.threads.markEnded(record.pipeline, record.releaseId, produced);
      await this.ledger.done(key);
      if (!posted.adopted) this.options.metrics.replyLatency.observe({ needs_person: String(urgent) }, Math.max(0, Date.now() - ctx.job.timestamp) / 1000);
    } finally {
      await this.threads.releaseReply(record.pipeline, record.releaseId, effect.id, claim);
    }
  }

  /**
   * The pause a reply asked about is over: the posted reply is edited to its text without buttons
   * and how the pause ended; one not posted yet is posted that way. Under the reply's claim, so a
   * reply being posted right now is settled after it lands. A deleted reply has no buttons left.
   */
  private async settleReply(ctx: JobContext, effect: ThreadSettleEffect): Promise<void> {
    const { pipeline, releaseId } = ctx.record;
    const id = effect.reply.id;
    const claim = await this.threads.claimReply(pipeline, releaseId, id, this.lockMs);
    if (!claim) return this.reschedule(ctx, LOCK_BUSY_RETRY_MS);
    try {
      const [posted, replied, thread] = await Promise.all([this.threads.replyMessage(pipeline, releaseId, id), this.threads.replied(pipeline, releaseId, id), this.threads.get(pipeline, releaseId)]);
      if (posted.settled) return;
      if (replied && posted.ts && thread) {
        const message = renderSettledReply(effect.reply, ctx.record, effect.ended);
        // Only from a full bucket, never booked: parents (booked) keep the workspace's chat.update
        // budget, and a storm of ended pauses cannot push their final state back by minutes.
        await this.spend(ctx, 'update', this.spec.update, { book: false, reserve: Math.max(0, this.spec.update.burst - 1) });
        if (!(await this.threads.holdsReply(pipeline, releaseId, id, claim, this.lockMs))) throw this.fenced(ctx, 'reply', `the claim on reply ${id} expired before chat.update`);
        const update = () => this.client.chat.update({ channel: thread.channel, ts: posted.ts!, text: message.text, blocks: message.blocks as never, metadata: postMetadata({ pipeline, releaseId, effectId: id }) });
        await this.call(ctx, 'chat.update', 'update', update).catch((err: unknown) => {
          if (!(err instanceof ParentGoneError)) throw err;
        });
      }
      await this.threads.markSettled(pipeline, releaseId, id, effect.ended);
    } finally {
      await this.threads.releaseReply(pipeline, releaseId, id, claim);
    }
  }

  /**
   * One chat.postMessage that lands once: if an earlier attempt may have reached Slack unseen,
   * read it back by metadata and adopt it; otherwise note the attempt, then post. A clear "no"
   * from Slack (429, ok:false) accounts for the attempt; a lost answer leaves it open.
   */
  private async postOnce(
    ctx: JobContext,
    key: PostKey,
    where: { channel: string; threadTs?: string; budget: string },
    send: () => Promise<{ ts?: string; channel?: string }>,
  ): Promise<{ ts: string; channel: string; adopted: boolean }> {
    const since = await this.ledger.unaccounted(key);
    if (since !== undefined) {
      await this.spend(ctx, 'history', this.spec.history ?? DEFAULT_BUDGETS.history!, { book: true });
      const method = where.threadTs ? 'conversations.replies' : 'conversations.history';
      let found: string | undefined;
      try {
        found = await this.call(ctx, method, 'history', () => findPosted(this.client, key, { channel: where.channel, sinceMs: since, ...(where.threadTs ? { threadTs: where.threadTs } : {}) }));
      } catch (err) {
        // No history scope (an app installed before it was added) must not lose the post: post
        // again, at the risk of a double. call() already logged the error with its fix.
        if (!(err instanceof UnrecoverableError)) throw err;
        this.log.warn({ pipeline: key.pipeline, release: key.releaseId, effect: key.effectId }, 'cannot read Slack history to settle an unanswered post; posting it again (it may show twice)');
      }
      if (found) {
        this.options.metrics.adopted.inc({ kind: key.effectId === PARENT_EFFECT ? 'parent' : 'reply' });
        this.log.info({ pipeline: key.pipeline, release: key.releaseId, effect: key.effectId, ts: found }, 'Slack already had this post (its answer was lost); adopted it instead of posting again');
        return { ts: found, channel: where.channel, adopted: true };
      }
      await this.ledger.accountedFor(key);
    }
    await this.ledger.begin(key, Date.now());
    const posted = await this.call(ctx, 'chat.postMessage', where.budget, send, async (err) => {
      if (!mayHaveLanded(err)) await this.ledger.accountedFor(key);
    });
    if (!posted.ts) throw new Error('chat.postMessage answered without a ts');
    return { ts: posted.ts, channel: posted.channel ?? where.channel, adopted: false };
  }

  /** The thread's parent, posting it first if this release has none yet (exactly once across replicas). */
  private async ensureParent(ctx: JobContext, pipeline: PipelineConfig): Promise<{ thread: ThreadRef; created: boolean }> {
    const { record } = ctx;
    const existing = await this.threads.get(record.pipeline, record.releaseId);
    if (existing) return { thread: existing, created: false };
    const lock = await this.threads.lock(record.pipeline, record.releaseId, this.lockMs);
    if (!lock) return this.reschedule(ctx, LOCK_BUSY_RETRY_MS);
    try {
      const raced = await this.threads.get(record.pipeline, record.releaseId);
      if (raced) return { thread: raced, created: false };
      const channel = pipeline.channel;
      const budget = `post:${channel}`;
      await this.spend(ctx, budget, this.spec.postPerChannel, { book: true });
      const message = renderParent(record, pipeline, this.options.frozenStages?.(pipeline));
      const key = parentKey(record);
      if ((await this.threads.checkLock(record.pipeline, record.releaseId, lock, this.lockMs)) === 'lock-lost') throw this.fenced(ctx, 'thread', 'the thread lock expired before the parent was posted');
      const posted = await this.postOnce(ctx, key, { channel, budget }, () =>
        this.client.chat.postMessage({ channel, text: message.text, blocks: message.blocks as never, metadata: postMetadata(key) }),
      );
      // An adopted parent shows some earlier render: leave the digest empty so the next render edits it.
      const thread = { channel: posted.channel, ts: posted.ts, rendered: posted.adopted ? '' : messageDigest(message), version: posted.adopted ? -1 : record.version };
      // Lost meanwhile: another writer holds the thread now and saves (or adopts, by metadata) its own parent.
      if ((await this.threads.saveParentUnderLock(record.pipeline, record.releaseId, thread, lock, this.lockMs)) === 'lock-lost') throw this.fenced(ctx, 'thread', `the thread lock expired while the parent was posted (ts ${thread.ts} is not saved)`);
      await this.ledger.done(key);
      await this.threads.expireWhenFinished(record.pipeline, record.releaseId, FINISHED_RELEASE_STATUSES.includes(record.status));
      this.log.info({ pipeline: record.pipeline, release: record.releaseId, channel: thread.channel, ts: thread.ts }, 'release thread started');
      return { thread, created: !posted.adopted };
    } finally {
      await this.threads.unlock(record.pipeline, record.releaseId, lock);
    }
  }

  /** A chart job calls Slack, spends (as a routine post) and retries exactly as replies do. */
  private chartCalls = (ctx: JobContext): ChartCalls => ({
    call: (method, budget, send, onError) => this.call(ctx, method, budget, send, onError),
    spend: (budget) => this.spend(ctx, budget, this.spec.postPerChannel, { book: false, reserve: Math.min(1, this.spec.postPerChannel.burst - 1) }),
    busy: () => this.reschedule(ctx, LOCK_BUSY_RETRY_MS),
    retryLater: (method, error, cause) => this.retryLater(ctx, method, error, cause),
  });

  /** Told at warn and counted: the write that would have followed is not made. */
  private fenced(ctx: JobContext, what: 'job' | 'thread' | 'reply', why: string): FencedSlackError {
    this.options.metrics.fencedWrites.inc({ what });
    this.log.warn({ pipeline: ctx.record.pipeline, release: ctx.record.releaseId, jobId: ctx.job.id, job: ctx.job.data.type, what }, `fenced: ${why}; nothing sent`);
    return new FencedSlackError(why);
  }

  /**
   * Spends one call from a budget, or moves the job to the delayed set until the budget allows
   * it. Booked callers (parents, replies a person waits on) get a slot in arrival order; routine
   * replies only take what is left over `reserve`.
   */
  private async spend(ctx: JobContext, budget: string, spec: BudgetSpec, options: { book: boolean; reserve?: number }): Promise<void> {
    const { job } = ctx;
    const slot = job.data.slot;
    if (slot?.budget === budget) {
      // Woken a little early: wait for the slot already booked rather than booking another.
      if (Date.now() < slot.at - 20) await this.reschedule(ctx, slot.at - Date.now());
      await job.updateData({ ...job.data, slot: undefined });
      return;
    }
    const waitMs = await this.budgets.take(budget, spec, options);
    if (waitMs > 0) {
      this.options.metrics.budgetDelays.inc({ budget: budget.startsWith('post:') ? 'post' : budget });
      if (options.book) await job.updateData({ ...job.data, slot: { budget, at: Date.now() + waitMs } });
      await this.reschedule(ctx, waitMs);
    }
  }

  private async reschedule(ctx: JobContext, waitMs: number): Promise<never> {
    this.log.debug({ jobId: ctx.job.id, job: ctx.job.data.type, waitMs }, 'job waits');
    await ctx.job.moveToDelayed(Date.now() + waitMs, ctx.token);
    throw new DelayedError();
  }

  /** One Slack call; `onError` sees the client's own error before it becomes a retry or a failure. */
  private async call<T>(ctx: JobContext, method: string, budget: string, send: () => Promise<T>, onError?: (err: unknown) => Promise<void>): Promise<T> {
    const { metrics } = this.options;
    // The job's own fence: a writer that woke after BullMQ handed its job to another must not post or edit.
    if ((method.startsWith('chat.') || method === 'files.completeUploadExternal') && !(await jobLockHeld(ctx.job, ctx.token, this.lockMs))) throw this.fenced(ctx, 'job', `the lock of job ${ctx.job.id} is no longer ours before ${method}`);
    try {
      const result = await send();
      metrics.calls.inc({ method, outcome: 'ok' });
      return result;
    } catch (err) {
      await onError?.(err);
      const failure = classifySlackError(err);
      const where = { pipeline: ctx.record.pipeline, release: ctx.record.releaseId, method };
      switch (failure.kind) {
        case 'rate-limited': {
          metrics.calls.inc({ method, outcome: 'rate_limited' });
          metrics.rateLimited.inc({ method });
          const waitMs = Math.max(1, Math.round(failure.retryAfterMs * (this.options.retryAfterScale ?? 1)));
          await this.budgets.block(budget, waitMs);
          this.log.warn({ ...where, retryAfterMs: failure.retryAfterMs }, 'Slack answered 429; the job waits for Retry-After');
          return this.reschedule(ctx, waitMs);
        }
        case 'permanent':
          metrics.calls.inc({ method, outcome: 'permanent_error' });
          metrics.permanentErrors.inc({ error: failure.error, method });
          this.log.error({ ...where, error: failure.error }, `Slack ${method} failed with ${failure.error}: ${failure.hint}. Not retried.`);
          throw new UnrecoverableError(`${failure.error}: ${failure.hint}`);
        case 'parent-gone':
          metrics.calls.inc({ method, outcome: 'parent_gone' });
          this.log.warn({ ...where, error: failure.error }, `Slack ${method} failed with ${failure.error}: the thread parent was deleted in Slack`);
          throw new ParentGoneError(`${failure.error}: the thread parent was deleted in Slack`);
        case 'transient':
          metrics.calls.inc({ method, outcome: 'error' });
          return this.retryLater(ctx, method, failure.error, err);
      }
    }
  }

  /**
   * A failure time can fix: back off (exponential, capped) and try again, for up to
   * `retry.maxMs`. The job keeps its effects meanwhile, so nothing is lost while Slack is down.
   */
  private async retryLater(ctx: JobContext, method: string, error: string, cause: unknown): Promise<never> {
    const { job } = ctx;
    const now = Date.now();
    const state = job.data.retry ?? { attempts: 0, since: now };
    const where = { pipeline: ctx.record.pipeline, release: ctx.record.releaseId, job: job.data.type, method, error };
    if (now - state.since >= this.retry.maxMs) {
      this.options.metrics.gaveUp.inc({ job: job.data.type, error });
      await this.options.redis.zrem(this.options.keys.slackRetrying(), String(job.id));
      this.log.error({ ...where, failingForMs: now - state.since, attempts: state.attempts }, `Slack ${method} kept failing (${error}) for longer than the retry window; giving up on this job`);
      throw new UnrecoverableError(`Slack ${method} kept failing (${error}) for ${Math.round((now - state.since) / 1000)} s: ${String((cause as Error).message ?? cause)}`);
    }
    const attempts = state.attempts + 1;
    const waitMs = backoffMs(attempts, this.retry);
    await job.updateData({ ...job.data, retry: { attempts, since: state.since } });
    await this.options.redis.zadd(this.options.keys.slackRetrying(), 'NX', state.since, String(job.id));
    this.options.metrics.retries.inc({ method, error });
    this.log.warn({ ...where, attempts, waitMs, failingForMs: now - state.since }, `Slack ${method} failed (${error}); retrying with backoff`);
    return this.reschedule(ctx, waitMs);
  }
}
