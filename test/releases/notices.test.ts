/**
 * Keyed notices: a reply is announced the first time its key is noticed and never again while the
 * record remembers the key (the last MAX_NOTICES). The keys are looked up in a set kept beside the
 * record's array (notices.ts); whatever the order of keys, the evictions, the copies of the record
 * (a stored record is decoded anew, a reduce copies it) and writes of the list that are not
 * noticeReply's (record/bounded-lists.ts), the answer is the array's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NOTICES } from '../../src/releases/reduce/context.js';
import { hasNotice, noticeReply } from '../../src/releases/reduce/notices.js';
import { pushBounded } from '../../src/releases/record/bounded-lists.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';

const recordWith = (notices: string[]): ReleaseRecord => ({ notices }) as unknown as ReleaseRecord;

describe('keyed notices', () => {
  it('a reply is announced once per remembered key, as a scan of the record would say, through evictions and copies (fast-check)', () => {
    const step = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: MAX_NOTICES + 150 }).map((k) => ({ kind: 'notice' as const, key: `paused:prod/shop/svc-${k}` })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'copy' as const }) },
      // A write of the list that is not noticeReply's, through the one way the list is written.
      { weight: 1, arbitrary: fc.integer({ min: 0, max: MAX_NOTICES + 150 }).map((k) => ({ kind: 'written' as const, key: `paused:prod/shop/svc-${k}` })) },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 1_500, size: 'max' }), (steps) => {
        let record = recordWith([]);
        for (const s of steps) {
          if (s.kind === 'copy') {
            // What a decode or structuredClone hands the next reduce: the same keys, a new array.
            record = recordWith([...record.notices]);
            continue;
          }
          if (s.kind === 'written') {
            if (!record.notices.includes(s.key)) pushBounded(record.notices, s.key, MAX_NOTICES);
            continue;
          }
          const remembered = record.notices.includes(s.key);
          expect(hasNotice(record, s.key)).toBe(remembered);
          const reply = noticeReply(record, s.key, 'paused', {});
          expect(reply === undefined).toBe(remembered);
          expect(hasNotice(record, s.key)).toBe(true);
          expect(record.notices.length).toBeLessThanOrEqual(MAX_NOTICES);
        }
        expect(new Set(record.notices).size).toBe(record.notices.length);
      }),
      { numRuns: 60 },
    );
  });

  it('a key evicted past MAX_NOTICES is forgotten: noticed again, it is announced again', () => {
    const record = recordWith([]);
    expect(noticeReply(record, 'first', 'paused', {})).toBeDefined();
    for (let i = 0; i < MAX_NOTICES; i++) noticeReply(record, `k${i}`, 'paused', {});
    expect(hasNotice(record, 'first')).toBe(false);
    expect(noticeReply(record, 'first', 'paused', {})?.id).toBe('first');
    expect(noticeReply(record, 'first', 'paused', {})).toBeUndefined();
  });
});
