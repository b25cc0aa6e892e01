/** Record types as the renderer sees them. */
import type { ThreadEffect } from '../../releases/store/ports.js';

export type { ReleaseRecord } from '../../releases/record/record.js';
export type ThreadReplyEffect = Extract<ThreadEffect, { type: 'thread.reply' }>;
export type ThreadSettleEffect = Extract<ThreadEffect, { type: 'thread.settle' }>;
