import type { Logger } from '../../obs/logger.js';
import type { ThreadEffect, ThreadEffectSink } from '../store/ports.js';
import type { ReleaseRecord } from '../record/record.js';

/** Without a Slack workspace the replies a person would get go to the log instead. */
export class LogThreadSink implements ThreadEffectSink {
  constructor(private readonly logger: Logger) {}

  async send(record: ReleaseRecord, effects: ThreadEffect[]): Promise<void> {
    for (const effect of effects) {
      if (effect.type !== 'thread.reply') continue;
      this.logger.info(
        { pipeline: record.pipeline, releaseId: record.releaseId, reply: effect.kind, stage: effect.stage, target: effect.target, detail: effect.detail },
        `release ${record.releaseId}: ${effect.kind}`,
      );
    }
  }
}
