/** The words of a stage that mixes apps: escaped, bounded, and the split a person can paste. */
import { describe, expect, it } from 'vitest';
import type { OtherReleases } from '../../../src/releases/record/record.js';
import { mixedStageStatusLine, mixedStageText } from '../../../src/slack/render/mixed-stage.js';

const mixed: OtherReleases = {
  own: { targets: ['prod/shop/checkout'], count: 1, app: 'checkout' },
  others: [{ releaseId: 'payments-7', targets: ['prod/shop/payments'], count: 1, app: 'payments' }],
  releaseCount: 1,
  split: { label: 'app.kubernetes.io/name', value: 'checkout' },
};

describe('a stage that mixes apps, in words', () => {
  it('names which targets run which release and the selector of one pipeline per app', () => {
    expect(mixedStageText('*prod*', { ...mixed, selector: 'hangar.io/release-tracked=true' }, 'checkout-3')).toBe(
      [
        ':warning: *prod* (selector `hangar.io/release-tracked=true`) mixes apps: its targets run different releases at the same time. This release waits only for its own targets.',
        '• this release (`checkout-3`) runs on `prod/shop/checkout`',
        '• `payments-7` runs on `prod/shop/payments`',
        'To follow each app on its own, give it a pipeline whose stage selects `hangar.io/release-tracked=true,app.kubernetes.io/name=checkout` for this one (`app.kubernetes.io/name` seen: `checkout`, `payments`).',
      ].join('\n'),
    );
  });

  it('text from the cluster pings nobody and the lists are counted past what is named', () => {
    const hostile: OtherReleases = {
      own: { targets: ['prod/shop/<!channel>'], count: 1 },
      others: [{ releaseId: '<!here>`x', targets: ['prod/shop/a', 'prod/shop/b'], count: 12 }],
      releaseCount: 4,
    };
    const text = mixedStageText('*prod*', hostile, 'r1');
    expect(text).not.toMatch(/<!channel>|<!here>/);
    expect(text).toContain('`&lt;!here&gt;\'x` runs on `prod/shop/a`, `prod/shop/b` and 10 more');
    expect(text).toContain('• and 3 more releases');
    expect(text).toContain('Give each app’s targets a label of its own');
    const line = mixedStageStatusLine('prod', hostile, undefined);
    expect(line).not.toMatch(/<!here>/);
    expect(line).toContain('and 3 more releases');
  });
});
