/**
 * The bounded line reader behind KubeApi.watch (src/kube/watch-lines.ts): lines are the same
 * however the bytes were cut into chunks, a line over the cap is reported once and nothing after
 * it is kept, the stream stops at its byte budget, and event parsing skips what is not an event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWatchEvent, WatchLineReader, type LineVerdict, type WatchLineLimits } from '../../src/kube/watch-lines.js';

const encoder = new TextEncoder();
const LARGE: WatchLineLimits = { maxLineBytes: 1 << 20, maxStreamBytes: 1 << 30 };

/** Reads `bytes` cut at `cuts` (sorted offsets); the lines delivered and the verdict of each push. */
function readCut(bytes: Uint8Array, cuts: number[], limits: WatchLineLimits = LARGE): { lines: string[]; verdicts: LineVerdict[]; reader: WatchLineReader } {
  const reader = new WatchLineReader(limits);
  const lines: string[] = [];
  const verdicts: LineVerdict[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    verdicts.push(reader.push(bytes.subarray(from, at), (l) => lines.push(l)));
    from = at;
  }
  reader.end((l) => lines.push(l));
  return { lines, verdicts, reader };
}

const cutsOf = (length: number) => fc.uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 40 }).map((c) => c.sort((a, b) => a - b));

describe('WatchLineReader', () => {
  it('gives the same lines for any split of the bytes into chunks, multi-byte UTF-8 included', () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 12 }).chain((lines) => {
          const bytes = encoder.encode(lines.map((l) => `${l}\n`).join(''));
          return fc.tuple(fc.constant(lines), fc.constant(bytes), cutsOf(bytes.length));
        }),
        ([lines, bytes, cuts]) => {
          const read = readCut(bytes, cuts);
          expect(read.lines).toEqual(lines);
          expect(read.verdicts.every((v) => v === 'more')).toBe(true);
        },
      ),
    );
  });

  it('reports a line over the cap once, keeps nothing after it, and delivers the lines before it', () => {
    const cap = 64;
    fc.assert(
      fc.property(
        fc.integer({ min: cap + 1, max: cap * 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 10_000 }),
        (longLength, withNewline, seed) => {
          const bytes = encoder.encode(`first\n${'x'.repeat(longLength)}${withNewline ? '\nlast\n' : ''}`);
          const cuts = [...new Set([seed % bytes.length, (seed * 7) % bytes.length, (seed * 13) % bytes.length])].sort((a, b) => a - b);
          const read = readCut(bytes, cuts, { maxLineBytes: cap, maxStreamBytes: 1 << 20 });
          expect(read.lines).toEqual(['first']);
          expect(read.verdicts.filter((v) => v === 'line-too-long').length).toBeGreaterThanOrEqual(1);
          // Once reported, the verdict stays: every later push says the same, and nothing was buffered.
          const first = read.verdicts.indexOf('line-too-long');
          expect(read.verdicts.slice(first).every((v) => v === 'line-too-long')).toBe(true);
          expect((read.reader as unknown as { pendingBytes: number }).pendingBytes).toBe(0);
        },
      ),
    );
  });

  it('says a line is too long as soon as its bytes pass the cap, before any newline', () => {
    const reader = new WatchLineReader({ maxLineBytes: 10, maxStreamBytes: 1 << 20 });
    expect(reader.push(encoder.encode('0123456789'), () => undefined)).toBe('more');
    expect(reader.push(encoder.encode('a'), () => undefined)).toBe('line-too-long');
  });

  it('accepts a line of exactly the cap, a CRLF ending counted as a newline', () => {
    const lines: string[] = [];
    const reader = new WatchLineReader({ maxLineBytes: 10, maxStreamBytes: 1 << 20 });
    expect(reader.push(encoder.encode('0123456789\nabc\r\n'), (l) => lines.push(l))).toBe('more');
    expect(lines).toEqual(['0123456789', 'abc']);
  });

  it('stops at the stream budget, delivering the lines wholly within it', () => {
    const lines: string[] = [];
    const reader = new WatchLineReader({ maxLineBytes: 100, maxStreamBytes: 8 });
    expect(reader.push(encoder.encode('abc\ndef\nghi\n'), (l) => lines.push(l))).toBe('stream-budget-spent');
    reader.end((l) => lines.push(l));
    expect(lines).toEqual(['abc', 'def']);
    expect(reader.bytesRead).toBe(8);
  });

  it('delivers a last line that has no newline when the stream ends', () => {
    expect(readCut(encoder.encode('a\nb'), [1]).lines).toEqual(['a', 'b']);
  });
});

describe('parseWatchEvent', () => {
  it('reads {type, object} and skips everything else', () => {
    expect(parseWatchEvent('{"type":"ADDED","object":{"metadata":{"name":"a"}}}')).toEqual({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    for (const line of ['', 'garbage', '{"type":"ADDED","object":{"metadata"', '[1,2]', '5', 'null', '{"type":"ADDED"}', '{"type":"ADDED","object":[1]}', '{"type":"SHOUTED","object":{}}', '{"type":1,"object":{}}', '{"__proto__":{"type":"ADDED","object":{}}}']) {
      expect(parseWatchEvent(line), line).toBeUndefined();
    }
  });

  it('leaves a __proto__ key inside an object as data, polluting nothing', () => {
    const event = parseWatchEvent('{"type":"MODIFIED","object":{"__proto__":{"polluted":true},"metadata":{"name":"a"}}}');
    expect(event?.type).toBe('MODIFIED');
    expect(Object.getPrototypeOf(event!.object)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
