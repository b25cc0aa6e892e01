import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseStatus } from '../../src/releases/record/record.js';
import { markLate } from '../../src/slack/render/late.js';
import { renderReply } from '../../src/slack/render/reply.js';
import type { ReplyProduced } from '../../src/slack/writer/jobs.js';
import { endTold, lateReply, type ThreadEnd } from '../../src/slack/writer/late-reply.js';
import { ThreadStore } from '../../src/slack/writer/threads.js';
import { createKeys } from '../../src/store/keys.js';
import { deletePrefix, redisClient, testPrefix } from '../helpers/slack-harness.js';
import { record, reply } from './support/records.js';

let redis: Redis;
const prefix = testPrefix();
beforeAll(() => {
  redis = redisClient();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const at = (version: number, status: ReleaseStatus = 'InProgress'): ReplyProduced => ({ version, status, at: 1_700_000_000_000 + version * 60_000 });

describe('a late reply (late-reply.ts)', () => {
  it('is one of an older record than the end the thread shows', () => {
    const complete: ThreadEnd = { version: 7, status: 'Complete' };
    expect(lateReply(at(5), complete)).toEqual({ at: at(5).at, before: 'Complete' });
    // Emitted with the end itself ("prod is Healthy" beside "release complete"): not late.
    expect(lateReply(at(7), complete)).toBeUndefined();
    expect(lateReply(at(8), complete)).toBeUndefined();
    // Nothing ended yet, or a job queued before jobs said where they came from: posted as ever.
    expect(lateReply(at(5), undefined)).toBeUndefined();
    expect(lateReply(undefined, complete)).toBeUndefined();
  });

  it('an ending reply tells its end; a reply of a record still running tells none', () => {
    expect(endTold(at(3))).toBeUndefined();
    expect(endTold(undefined)).toBeUndefined();
    expect(endTold(at(4, 'Failed'))).toEqual({ version: 4, status: 'Failed' });
  });

  it('the thread in Redis keeps the latest end it told, never an older one', async () => {
    const threads = new ThreadStore(redis, createKeys(prefix), 60_000);
    await threads.saveParent('shop', 'rel-1', { channel: 'C0THREAD', ts: '1.000', rendered: 'x', version: 1 });
    await threads.markEnded('shop', 'rel-1', at(3));
    expect((await threads.get('shop', 'rel-1'))?.ended).toBeUndefined();
    await threads.markEnded('shop', 'rel-1', at(9, 'Complete'));
    await threads.markEnded('shop', 'rel-1', at(4, 'Failed'));
    expect((await threads.get('shop', 'rel-1'))?.ended).toEqual({ version: 9, status: 'Complete' });
    await threads.markEnded('shop', 'rel-1', at(11, 'Failed'));
    expect((await threads.get('shop', 'rel-1'))?.ended).toEqual({ version: 11, status: 'Failed' });
  });

  it('in any order of delivery each reply is posted once, and exactly those delivered after a later end are marked', () => {
    const statuses: ReleaseStatus[] = ['InProgress', 'Paused', 'Complete', 'Failed', 'Aborted'];
    const replies = fc.uniqueArray(fc.record({ version: fc.integer({ min: 1, max: 30 }), status: fc.constantFrom(...statuses) }), { minLength: 1, maxLength: 12, selector: (r) => r.version });
    fc.assert(
      fc.property(replies.chain((rs) => fc.tuple(fc.constant(rs), fc.shuffledSubarray(rs, { minLength: rs.length, maxLength: rs.length }))), ([all, order]) => {
        let shown: ThreadEnd | undefined;
        const posted: { version: number; late: boolean }[] = [];
        for (const r of order) {
          const produced = { ...r, at: r.version };
          posted.push({ version: r.version, late: lateReply(produced, shown) !== undefined });
          // The thread keeps the later end (the store's rule, tested against Redis above).
          const told = endTold(produced);
          if (told && (!shown || told.version > shown.version)) shown = told;
        }
        expect(posted.map((p) => p.version).sort((a, b) => a - b)).toEqual(all.map((r) => r.version).sort((a, b) => a - b));
        // The model: late exactly when an ending reply of a later record was delivered before it.
        for (const [i, p] of posted.entries()) {
          const endedBefore = order.slice(0, i).some((r) => r.version > p.version && ['Complete', 'Failed', 'Aborted'].includes(r.status));
          expect(p.late).toBe(endedBefore);
        }
      }),
    );
  });
});

describe('how a late reply reads (render/late.ts)', () => {
  it('says first when it happened and which end it came before, and loses its buttons', () => {
    const message = renderReply(reply('paused', { generation: 3, stepIndex: 1, stepCount: 4 }), record({ status: 'Complete' }));
    expect(JSON.stringify(message.blocks)).toContain('glidepath.approve');
    const late = markLate(message, { at: Date.UTC(2026, 11, 1, 10, 42, 30), before: 'Complete' });
    expect(late.blocks[0]).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: ':hourglass: Posted late: this happened earlier, at <!date^1796121720^{date_short_pretty} {time}|2026-12-01 10:42 UTC>, before the release completed.' }],
    });
    expect(late.text.startsWith('(Earlier, before the release completed) ')).toBe(true);
    expect(late.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(late.blocks.slice(1)).toEqual(message.blocks.filter((b) => b.type !== 'actions'));
    expect(markLate(message, undefined)).toBe(message);
    expect(markLate(message, { at: 0, before: 'Aborted' }).text).toMatch(/^\(Earlier, before the release was aborted\)/);
  });
});
