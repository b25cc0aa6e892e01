/**
 * Ingest skips walking a parsed body for lone surrogates when its text has no surrogate escape
 * (mayHoldLoneSurrogate): that is only sound if every body that parses to an ill-formed string
 * has one. Checked over JSON texts of arbitrary UTF-16 strings, hand-escaped texts, and bodies
 * decoded from arbitrary bytes as ingest decodes them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mayHoldLoneSurrogate } from '../../src/facts/ingest.js';
import { hasIllFormed } from '../../src/model/unicode.js';

const anyUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((units) => String.fromCharCode(...units));
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, anyUnits, fc.integer(), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(anyUnits, tie('value'), { maxKeys: 4 })),
})).value;

const soundFor = (text: string) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  if (hasIllFormed(parsed)) expect(mayHoldLoneSurrogate(text), text).toBe(true);
};

describe('mayHoldLoneSurrogate', () => {
  it('is true for every JSON text that parses to a lone surrogate (JSON.stringify escapes them)', () => {
    fc.assert(fc.property(anyJson, (value) => soundFor(JSON.stringify(value))));
  });

  it('is true for hand-written escapes in either case, and false for a body without any', () => {
    for (const text of ['"\\ud800"', '{"a":"x\\uDFFFy"}', '["\\uDbFf"]', '{"\\udc00":1}']) {
      soundFor(text);
      expect(mayHoldLoneSurrogate(text)).toBe(true);
    }
    expect(mayHoldLoneSurrogate(JSON.stringify({ rollout: { name: 'svc-1 😀', note: '\\u0041' } }))).toBe(false);
  });

  it('holds for bodies decoded from arbitrary bytes, as ingest decodes them', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => soundFor(`"${[...Buffer.from(bytes).toString('utf8')].filter((c) => c >= ' ' && c !== '"' && c !== '\\').join('')}"`)));
  });
});
