/**
 * The reducer worker's Slack sink: turns thread effects into "slack" jobs. Idempotent per effect:
 * a reply's job id is derived from its effect id, and parent renders collapse into one job per
 * thread that reads the latest record when it runs.
 */
import type { Queue } from 'bullmq';
import type { ThreadEffect, ThreadEffectSink } from '../../releases/ports.js';
import type { ReleaseRecord } from '../../releases/record.js';
import { PRIORITY, needsPerson, parentDeduplicationId, replyJobId, type SlackJob } from './jobs.js';

export class SlackOutbox implements ThreadEffectSink {
  constructor(private readonly queue: Queue<SlackJob>) {}

  async send(record: ReleaseRecord, effects: ThreadEffect[]): Promise<void> {
    const { pipeline, releaseId } = record;
    let render = false;
    const adds: Promise<unknown>[] = [];
    for (const effect of effects) {
      if (effect.type === 'thread.render') {
        render = true;
        continue;
      }
      adds.push(
        this.queue.add(
          'reply',
          { type: 'reply', pipeline, releaseId, effect },
          { jobId: replyJobId(pipeline, releaseId, effect.id), priority: needsPerson(effect) ? PRIORITY.replyNeedingPerson : PRIORITY.reply },
        ),
      );
    }
    if (render) adds.push(this.requestRender(pipeline, releaseId));
    await Promise.all(adds);
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
