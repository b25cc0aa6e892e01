/**
 * The reducer worker's Slack sink: turns thread effects into "slack" jobs. Idempotent per effect:
 * a reply's job id is derived from its effect id, and parent renders collapse into one job per
 * thread that reads the latest record when it runs.
 */
import type { Queue } from 'bullmq';
import type { ThreadEffect, ThreadEffectSink } from '../../releases/store/ports.js';
import type { ReleaseRecord } from '../../releases/record/record.js';
import type { ThreadReplyEffect, ThreadSettleEffect } from '../render/types.js';
import { PRIORITY, needsPerson, parentDeduplicationId, replyJobId, settleJobId, type ReplyProduced, type SlackJob } from './jobs.js';

export class SlackOutbox implements ThreadEffectSink {
  constructor(private readonly queue: Queue<SlackJob>) {}

  async send(record: ReleaseRecord, effects: ThreadEffect[]): Promise<void> {
    const { pipeline, releaseId } = record;
    const replies = effects.filter((e): e is ThreadReplyEffect => e.type === 'thread.reply');
    const urgent = replies.filter(needsPerson);
    const routine = replies.filter((e) => !needsPerson(e));
    const produced: ReplyProduced = { version: record.version, status: record.status, at: record.updatedAt };
    const adds: Promise<unknown>[] = urgent.map((effect) => this.addReplies(pipeline, releaseId, [effect], PRIORITY.replyNeedingPerson, produced));
    if (routine.length > 0) adds.push(this.addReplies(pipeline, releaseId, routine, PRIORITY.reply, produced));
    for (const settle of effects.filter((e): e is ThreadSettleEffect => e.type === 'thread.settle')) {
      adds.push(this.queue.add('settle', { type: 'settle', pipeline, releaseId, effects: [settle] }, { jobId: settleJobId(pipeline, releaseId, settle.id), priority: PRIORITY.settle }));
    }
    if (effects.some((e) => e.type === 'thread.render')) adds.push(this.requestRender(pipeline, releaseId));
    await Promise.all(adds);
  }

  private addReplies(pipeline: string, releaseId: string, effects: ThreadReplyEffect[], priority: number, produced: ReplyProduced): Promise<unknown> {
    return this.queue.add(
      'reply',
      { type: 'reply', pipeline, releaseId, effects, produced },
      { jobId: replyJobId(pipeline, releaseId, effects.map((e) => e.id)), priority },
    );
  }

  /**
   * One parent job per thread at a time; an add while it runs leaves exactly one follow-up
   * (keepLastIfActive), so a change that lands mid-update is never lost.
   */
  requestRender(pipeline: string, releaseId: string): Promise<unknown> {
    return this.queue.add(
      'parent',
      { type: 'parent', pipeline, releaseId },
      { priority: PRIORITY.parent, deduplication: { id: parentDeduplicationId(pipeline, releaseId), keepLastIfActive: true } },
    );
  }
}
