import type { ThreadEffect, ThreadEffectSink } from '../../src/releases/store/ports.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';

/** Keeps, in order, the replies that would go to Slack (the Slack writer is tested on its own). */
export class RecordingSink implements ThreadEffectSink {
  readonly replies: { releaseId: string; kind: string; id: string; stage?: string; detail: Record<string, unknown> }[] = [];
  async send(record: ReleaseRecord, effects: ThreadEffect[]): Promise<void> {
    for (const e of effects) {
      if (e.type === 'thread.reply') this.replies.push({ releaseId: record.releaseId, kind: e.kind, id: e.id, stage: e.stage, detail: { ...e.detail } });
    }
  }
}
