import { describe, expect, it } from 'vitest';
import { HOME_BLOCK_LIMIT } from '../../../src/slack/render/blocks.js';
import { renderHome } from '../../../src/slack/render/home.js';
import { emptyCounts, figuresOver, lastDays, type DayRollup } from '../../../src/releases/store/delivery-figures.js';
import { pipelineConfig, record, stage, T0 } from '../support/records.js';
import { expectNoPings } from './limits.js';

describe('renderHome', () => {
  it('lists active releases per pipeline, newest first, with their stages at a glance', () => {
    const view = renderHome([
      {
        pipeline: pipelineConfig(),
        releases: [record({ releaseId: 'rel-4', createdAt: T0 - 1 }), record({ releaseId: 'rel-5', createdAt: T0, stages: [stage('staging', 'Healthy'), stage('prod', 'Paused')] })],
      },
      { pipeline: pipelineConfig('search', 'C0SEARCH'), releases: [] },
    ]);
    const texts = view.blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : b.type === 'context' ? b.elements.map((e) => e.text) : []));
    expect(texts[0]).toBe('*checkout* in <#C0CHECKOUT>');
    expect(texts[1]).toContain('`rel-5` · InProgress');
    expect(texts[1]).toContain(':white_check_mark: staging  →  :double_vertical_bar: prod');
    expect(texts[2]).toContain('`rel-4`');
    expect(texts[3]).toBe('*search* in <#C0SEARCH>');
    expect(texts[4]).toBe('No active release.');
  });

  it('stays within the Home tab limits with many releases and hostile names', () => {
    const releases = Array.from({ length: 300 }, (_, i) => record({ releaseId: `<!channel>-${i}`, createdAt: T0 + i }));
    const view = renderHome([{ pipeline: pipelineConfig(), releases }]);
    expect(view.blocks.length).toBeLessThanOrEqual(HOME_BLOCK_LIMIT);
    expectNoPings(view.blocks, ['<#C0CHECKOUT>']);
  });

  it('puts the person\'s own pipelines under their own header and says how many pipelines a fleet left out', () => {
    const view = renderHome(
      [
        { pipeline: pipelineConfig('ledger', 'C0LEDGER'), releases: [] },
        { pipeline: pipelineConfig(), releases: [record({ releaseId: 'rel-5' })] },
      ],
      { own: 1, notShown: 960 },
    );
    const texts = view.blocks.flatMap((b) => (b.type === 'header' ? [b.text.text] : b.type === 'section' ? [b.text.text] : b.type === 'context' ? b.elements.map((e) => e.text) : []));
    expect(texts.slice(0, 4)).toEqual(['Your apps', '*ledger* in <#C0LEDGER>', 'No active release.', 'Other pipelines']);
    expect(texts[4]).toBe('*checkout* in <#C0CHECKOUT>');
    expect(texts.at(-1)).toBe('960 more pipelines are not shown here: `/glidepath status <pipeline>` shows any of them.');
  });

  it('shows each pipeline\'s delivery figures after its releases, and a quiet month in words', () => {
    const now = Date.parse('2026-12-02T12:00:00Z');
    const days = (fill: (i: number) => Partial<DayRollup>): DayRollup[] =>
      lastDays(now, 30).map((day, i) => ({ day, counts: emptyCounts(), leadMs: [], recoveryMs: [], ...fill(i) }));
    const busy = days((i) => (i === 0 ? { counts: { ...emptyCounts(), started: 2, completed: 1, failed: 1, ended: 2, troubled: 1 }, leadMs: [90 * 60_000], recoveryMs: [] } : {}));
    const quiet = days(() => ({}));
    const view = renderHome([
      { pipeline: pipelineConfig(), releases: [record({ releaseId: 'rel-5' })], delivery: { week: figuresOver(busy, 7), month: figuresOver(busy, 30) } },
      { pipeline: pipelineConfig('search', 'C0SEARCH'), releases: [], delivery: { week: figuresOver(quiet, 7), month: figuresOver(quiet, 30) } },
    ], { deliveryNotShown: 30 });
    const texts = view.blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : b.type === 'context' ? b.elements.map((e) => e.text) : []));
    expect(texts[1]).toContain('`rel-5`');
    expect(texts[2]).toContain('*7 days:* 2 started · 1 completed · 1 failed · 0 aborted · 50% failed or aborted (1 of 2 ended) · median lead time 1h 30m · median time to recover –');
    expect(texts[2]).toContain('`▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁█` completed per day');
    expect(texts.slice(3)).toEqual([
      '*search* in <#C0SEARCH>',
      'No active release.',
      'No release recorded in the last 30 days.',
      'Delivery figures are shown for the first pipelines only; `/glidepath stats <pipeline>` gives them for any of the other 30.',
    ]);
  });
});
