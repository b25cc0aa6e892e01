import { describe, expect, it } from 'vitest';
import { HOME_BLOCK_LIMIT } from '../../../src/slack/render/blocks.js';
import { renderHome } from '../../../src/slack/render/home.js';
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
});
