/**
 * Every button value round-trips through its one encoder and decoder, always fits in what Slack
 * accepts, and an edited or garbage value is refused with what to do instead (never thrown).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeAbortClick,
  decodeAbortDialog,
  decodeApproveClick,
  decodePromoteClick,
  decodePromoteConfirmClick,
  decodeRefreshApproveClick,
  encodeAbortDialog,
  encodeButtonValue,
  encodePromoteButton,
  encodePromoteConfirm,
  encodeRefreshApprove,
  PRIVATE_METADATA_LIMIT,
  type Decoded,
} from '../../src/slack/buttons.js';
import { BUTTON_VALUE_LIMIT } from '../../src/slack/render/blocks.js';

/** Configured names (pipelines, stages, clusters) and namespaces: 63 characters like a Kubernetes label. */
const configName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
/** Object names: a DNS subdomain, 253 characters at most. */
const objectName = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/);
const podHash = fc.stringMatching(/^[a-z0-9]{1,16}$/);
/** Release ids are free-form where they come from annotations: any text, sometimes far too long. */
const releaseId = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', minLength: 1500, maxLength: 4000 }));
const revision = fc.oneof(fc.stringMatching(/^[0-9a-f]{40}$/), fc.string({ maxLength: 255 }));

const approveValue = fc.record({
  v: fc.constant(1 as const),
  p: configName,
  r: releaseId,
  st: configName,
  k: fc.constant('Rollout' as const),
  c: configName,
  ns: configName,
  n: objectName,
  g: fc.nat(),
  h: podHash,
  s: fc.nat({ max: 100 }),
});
const anyRenderedValue = fc.record(
  { v: fc.constant(1 as const), p: configName, r: releaseId, st: configName, k: fc.constantFrom('Rollout' as const, 'Application' as const), c: configName, ns: configName, n: objectName, g: fc.nat(), h: podHash, s: fc.nat({ max: 100 }) },
  { requiredKeys: ['v', 'p', 'r', 'k', 'c', 'ns', 'n'] },
);
const promoteValue = fc.record({ v: fc.constant(1 as const), p: configName, r: releaseId, st: configName, from: configName });
const refreshValue = fc.record({ v: fc.constant(1 as const), c: configName, ns: configName, n: objectName, step: fc.integer({ min: 1, max: 1000 }), rev: revision });
const confirmValue = fc.record(
  {
    v: fc.constant(1 as const),
    c: configName,
    project: configName,
    p: configName,
    st: configName,
    // A selector may match a few Stages or very many (then no button fits).
    stages: fc.oneof(fc.array(objectName, { maxLength: 10 }), fc.array(fc.stringMatching(/^[a-z0-9]{30,63}$/), { minLength: 35, maxLength: 80 })),
    freight: objectName,
    sel: fc.string({ maxLength: 300 }),
    glob: fc.string({ maxLength: 300 }),
  },
  { requiredKeys: ['v', 'c', 'project', 'p', 'st', 'stages'] },
);
const dialogValue = fc.record(
  { c: configName, ns: configName, n: objectName, h: podHash, channel: fc.stringMatching(/^[CGD][A-Z0-9]{2,12}$/), r: fc.string({ maxLength: 200 }) },
  { requiredKeys: ['c', 'ns', 'n', 'channel'] },
);

function ok<T>(decoded: Decoded<T>): T {
  if (decoded.kind !== 'ok') throw new Error(`refused: ${decoded.reason}`);
  return decoded.value;
}

/** What the value becomes when its release id had to be cut to fit: the rest is kept whole. */
function fitted<V extends { r: string }>(value: V): V {
  return JSON.stringify(value).length <= BUTTON_VALUE_LIMIT ? value : { ...value, r: value.r.slice(0, 200) };
}

const PROPERTY_RUNS = { numRuns: 300 };

describe('button values: encode then decode', () => {
  it('Approve and Abort: identity (the release id cut to 200 characters only when the whole would not fit), always within 2,000 characters', () => {
    fc.assert(
      fc.property(approveValue, (value) => {
        const encoded = encodeButtonValue(value);
        expect(encoded.length).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
        expect(ok(decodeApproveClick(encoded))).toEqual(fitted(value));
        expect(ok(decodeAbortClick(encoded))).toEqual(fitted(value));
      }),
      PROPERTY_RUNS,
    );
  });

  it('Approve refuses a value that does not name a Rollout step (an Application, or no generation, hash and step)', () => {
    fc.assert(
      fc.property(anyRenderedValue, (value) => {
        const encoded = encodeButtonValue(value);
        expect(encoded.length).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
        const complete = value.k === 'Rollout' && value.g !== undefined && value.h !== undefined && value.s !== undefined;
        expect(decodeApproveClick(encoded).kind).toBe(complete ? 'ok' : 'refused');
        expect(decodeAbortClick(encoded).kind).toBe(value.k === 'Rollout' ? 'ok' : 'refused');
      }),
      PROPERTY_RUNS,
    );
  });

  it('Promote: identity, always within 2,000 characters', () => {
    fc.assert(
      fc.property(promoteValue, (value) => {
        const encoded = encodePromoteButton(value);
        expect(encoded.length).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
        expect(ok(decodePromoteClick(encoded))).toEqual(fitted(value));
      }),
      PROPERTY_RUNS,
    );
  });

  it('Refresh-and-approve: identity whenever a button is drawn, and always drawn for a revision of up to 255 characters', () => {
    fc.assert(
      fc.property(refreshValue, (value) => {
        const encoded = encodeRefreshApprove(value);
        expect(encoded).toBeDefined();
        expect(encoded!.length).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
        expect(ok(decodeRefreshApproveClick(encoded))).toEqual(value);
      }),
      PROPERTY_RUNS,
    );
    expect(encodeRefreshApprove({ v: 1, c: 'prod', ns: 'argocd', n: 'checkout', step: 3, rev: 'x'.repeat(BUTTON_VALUE_LIMIT) })).toBeUndefined();
  });

  it('promote confirmation: identity whenever it fits; none is drawn (the command asks to narrow the choice) when it would not', () => {
    fc.assert(
      fc.property(confirmValue, (value) => {
        const encoded = encodePromoteConfirm(value);
        const fits = JSON.stringify(value).length <= BUTTON_VALUE_LIMIT;
        expect(encoded === undefined).toBe(!fits);
        expect(encoded?.length ?? 0).toBeLessThanOrEqual(BUTTON_VALUE_LIMIT);
        if (encoded !== undefined) expect(ok(decodePromoteConfirmClick(encoded))).toEqual(value);
      }),
      // Shrinking long lists of long names takes minutes; the first counterexample says enough.
      { ...PROPERTY_RUNS, endOnFailure: true },
    );
  });

  it("the abort dialog's metadata: identity, within Slack's 3,000 characters", () => {
    fc.assert(
      fc.property(dialogValue, (value) => {
        const encoded = encodeAbortDialog(value);
        expect(encoded.length).toBeLessThanOrEqual(PRIVATE_METADATA_LIMIT);
        expect(ok(decodeAbortDialog(encoded))).toEqual(value);
      }),
      PROPERTY_RUNS,
    );
  });
});

const CLICK_DECODERS = [decodeApproveClick, decodeAbortClick, decodePromoteClick, decodeRefreshApproveClick, decodePromoteConfirmClick] as const;

function expectHelpfulRefusal(decoded: Decoded<unknown>): void {
  expect(decoded.kind).toBe('refused');
  if (decoded.kind !== 'refused') return;
  expect(decoded.reason).toContain('nothing was changed');
  // What to do instead: the command that does it by name.
  expect(decoded.reason).toMatch(/`\/glidepath (approve|abort|promote)[^`]*`/);
}

describe('button values: an edited or garbage value', () => {
  it('any text, any JSON, or no value at all is refused with what to do instead, never thrown', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.constant(undefined), fc.constant('null'), fc.constant('{}')), (raw) => {
        for (const decode of CLICK_DECODERS) expectHelpfulRefusal(decode(raw));
      }),
      PROPERTY_RUNS,
    );
  });

  it('a valid value with a field dropped, a field of the wrong type, another version or cut short is refused', () => {
    const cases: { value: fc.Arbitrary<any>; encode: (v: any) => string; decode: (raw: string | undefined) => Decoded<unknown>; optional: string[] }[] = [
      { value: approveValue, encode: encodeButtonValue, decode: decodeApproveClick, optional: ['st'] },
      { value: approveValue, encode: encodeButtonValue, decode: decodeAbortClick, optional: ['st', 'g', 'h', 's'] },
      { value: promoteValue, encode: encodePromoteButton, decode: decodePromoteClick, optional: [] },
      { value: refreshValue, encode: (v) => encodeRefreshApprove(v)!, decode: decodeRefreshApproveClick, optional: [] },
    ];
    for (const { value, encode, decode, optional } of cases) {
      fc.assert(
        fc.property(value, fc.nat(), fc.constantFrom('drop', 'retype', 'version', 'cut'), (v, pick, edit) => {
          const encoded = encode(v);
          const parsed = JSON.parse(encoded) as Record<string, unknown>;
          const keys = Object.keys(parsed);
          const required = keys.filter((k) => !optional.includes(k));
          let edited: string;
          if (edit === 'drop') edited = JSON.stringify({ ...parsed, [required[pick % required.length]!]: undefined });
          else if (edit === 'retype') {
            const key = keys[pick % keys.length]!;
            edited = JSON.stringify({ ...parsed, [key]: typeof parsed[key] === 'string' ? 7 : 'seven' });
          }
          else if (edit === 'version') edited = JSON.stringify({ ...parsed, v: 2 });
          else edited = encoded.slice(0, pick % encoded.length);
          expectHelpfulRefusal(decode(edited));
        }),
        { numRuns: 150 },
      );
    }
  });

  it('abort dialog metadata that is not ours is refused, never thrown', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.constant(undefined)), (raw) => {
        expect(decodeAbortDialog(raw).kind).toBe('refused');
      }),
      PROPERTY_RUNS,
    );
  });
});
