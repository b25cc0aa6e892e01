/**
 * Free text from a cluster is cut, not refused (issue 20): the cut helper's promises, as
 * properties over any UTF-16 string, and what the schemas do with an over-long message, a
 * 10 MiB annotation and an over-long identifier.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rolloutFactBody } from '../../src/facts/schemas.js';
import { applicationSchema } from '../../src/model/application.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { cutText } from '../../src/model/meta.js';
import { deriveRolloutState } from '../../src/model/rollout-state.js';
import { rolloutSchema } from '../../src/model/rollout.js';
import { cutWithEllipsis, ELLIPSIS, isWellFormed } from '../../src/model/unicode.js';
import { fixture } from '../helpers/rollout-bodies.js';

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Strings heavy in pairs (emoji), lone halves and plain letters, so cuts land on every kind of boundary. */
const text = fc.array(fc.constantFrom('a', 'é', '😀', '👍🏽', '\ud800', '\udc00', '…'), { maxLength: 60 }).map((parts) => parts.join(''));
const limit = fc.integer({ min: 1, max: 70 });

describe('cutWithEllipsis (what cutText applies)', () => {
  it('is the identity on a string within the limit', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), limit, (value, max) => {
      fc.pre(value.length <= max);
      expect(cutWithEllipsis(value, max)).toBe(value);
    }));
  });

  it('keeps at most max UTF-16 units, a prefix of the input then the ellipsis', () => {
    fc.assert(fc.property(text, limit, (value, max) => {
      fc.pre(value.length > max);
      const cut = cutWithEllipsis(value, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(cut.endsWith(ELLIPSIS)).toBe(true);
      expect(value.startsWith(cut.slice(0, -1))).toBe(true);
      // The longest such prefix: at most one unit (half a pair) is given up.
      expect(cut.length).toBeGreaterThanOrEqual(max - 1);
    }));
  });

  it('never splits a surrogate pair: a well-formed input gives a well-formed cut', () => {
    fc.assert(fc.property(text, limit, (value, max) => {
      const cut = cutWithEllipsis(value, max);
      const kept = cut.length > 0 && cut !== value ? cut.slice(0, -1) : cut;
      const end = kept.length;
      // The unit before the cut is never the first half of a pair whose second half was left behind.
      if (end > 0 && end < value.length) expect(isHigh(kept.charCodeAt(end - 1)) && isLow(value.charCodeAt(end))).toBe(false);
      if (isWellFormed(value)) expect(isWellFormed(cut)).toBe(true);
    }));
  });

  it('cuts an emoji whole: 3 letters and 😀 cut at 5 units keep the letters only', () => {
    expect(cutWithEllipsis('abc😀def', 5)).toBe('abc…');
    expect(cutWithEllipsis('abcd😀ef', 6)).toBe('abcd…');
    expect(cutWithEllipsis('abcd😀ef', 7)).toBe('abcd😀…');
  });

  it('is what the schemas apply', () => {
    fc.assert(fc.property(text, limit, (value, max) => {
      expect(cutText(max).parse(value)).toBe(cutWithEllipsis(value, max));
    }));
  });
});

describe('over-long text in the schemas', () => {
  const aborted = fixture('aborted');

  it('a 40 KB abort message is cut to 16384 units ending in …, and the Rollout is still Aborted', () => {
    const message = `RolloutAborted: metric "error-rate" assessed Failed ${'x'.repeat(40_000)}`;
    const body = { ...aborted, rollout: { ...aborted.rollout, status: { ...aborted.rollout.status, message } } };
    const parsed = rolloutFactBody.parse(body);
    const kept = parsed.rollout.status?.message ?? '';
    expect(kept).toHaveLength(16_384);
    expect(kept.endsWith('…')).toBe(true);
    expect(message.startsWith(kept.slice(0, -1))).toBe(true);
    expect(deriveRolloutState(parsed.rollout).aborted).toBe(true);
  });

  it('a 10 MiB annotation is cut to 256 KiB and the object still counts', () => {
    const huge = 'a'.repeat(10 * 1024 * 1024);
    const rollout = { ...aborted.rollout, metadata: { ...aborted.rollout.metadata, annotations: { 'example.com/huge': huge } } };
    const parsed = rolloutSchema.parse(rollout);
    expect(parsed.metadata.annotations['example.com/huge']).toHaveLength(262_144);
  });

  it('conditions, pause reasons, health and operation messages are cut, not refused', () => {
    const long = 'm'.repeat(20_000);
    const rollout = rolloutSchema.parse({
      ...aborted.rollout,
      status: { ...aborted.rollout.status, pauseConditions: [{ reason: 'r'.repeat(300) }], conditions: [{ type: 'Progressing', reason: 'r'.repeat(300), message: long }] },
    });
    expect(rollout.status?.pauseConditions?.[0]?.reason).toHaveLength(128);
    expect(rollout.status?.conditions?.[0]?.reason).toHaveLength(256);
    expect(rollout.status?.conditions?.[0]?.message).toHaveLength(16_384);
    const app = applicationSchema.parse({
      metadata: { namespace: 'argocd', name: 'web' },
      status: { health: { status: 'Degraded', message: long }, operationState: { phase: 'Failed', message: long } },
    });
    expect(app.status?.health?.message).toHaveLength(16_384);
    expect(app.status?.operationState?.message).toHaveLength(16_384);
  });

  it.each([
    ['a phase', (r: any) => (r.status.phase = 'P'.repeat(65)), 'status.phase'],
    ['a pod hash', (r: any) => (r.status.currentPodHash = 'h'.repeat(65)), 'status.currentPodHash'],
    ['an image', (r: any) => (r.spec.template = { spec: { containers: [{ name: 'app', image: 'i'.repeat(1025) }] } }), 'spec.template.spec.containers.0.image'],
    ['a uid', (r: any) => (r.metadata.uid = 'u'.repeat(129)), 'metadata.uid'],
    ['an annotation key', (r: any) => (r.metadata.annotations = { ['k'.repeat(318)]: 'v' }), 'metadata.annotations'],
  ])('an over-long identifier (%s) is refused, naming the field', (_what, mutate, path) => {
    const rollout = structuredClone(aborted.rollout) as any;
    mutate(rollout);
    const result = rolloutSchema.safeParse(rollout);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path.join('.')).toContain(path);
  });

  it('a 10 MiB label value is refused (labels are what selectors match)', () => {
    const rollout = { ...aborted.rollout, metadata: { ...aborted.rollout.metadata, labels: { env: 'a'.repeat(10 * 1024 * 1024) } } };
    expect(rolloutSchema.safeParse(rollout).success).toBe(false);
  });

  it('a Kargo Stage with a long verification message still parses, its message cut', () => {
    const stage = stageSchema.parse({
      metadata: { namespace: 'kargo-shop', name: 'prod', resourceVersion: '1' },
      status: { freightHistory: [{ verificationHistory: [{ id: 'v1', phase: 'Failed', message: 'x'.repeat(30_000) }] }] },
    });
    expect(stage.status?.freightHistory?.[0]?.verificationHistory?.[0]?.message).toHaveLength(16_384);
  });
});
