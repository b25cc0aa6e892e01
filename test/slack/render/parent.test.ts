import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StageStatus } from '../../../src/releases/record/record.js';
import { TRUNCATED } from '../../../src/text/mrkdwn.js';
import { renderParent } from '../../../src/slack/render/parent.js';
import { renderReply } from '../../../src/slack/render/reply.js';
import { imageTag } from '../../../src/releases/record/display-name.js';
import { pipelineConfig, record, reply, stage, target, T0 } from '../support/records.js';
import { expectNoPings, expectWithinSlackLimits } from './limits.js';

const pipeline = pipelineConfig();

function stageText(blocks: ReturnType<typeof renderParent>['blocks'], name: string): string {
  for (const b of blocks) if (b.type === 'section' && b.text.text.includes(`*${name}*`)) return b.text.text;
  throw new Error(`no row for stage ${name}`);
}

describe('renderParent', () => {
  it('shows the release: id, images, commit, pull request link and who merged', () => {
    const msg = renderParent(record(), pipeline);
    expect(msg.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Release rel-5 — checkout', emoji: false } });
    const fields = JSON.stringify(msg.blocks[1]);
    expect(fields).toContain('`registry.example/checkout:1.4.2`');
    expect(fields).toContain('`0123456789ab`');
    expect(fields).toContain('<https://github.example/shop/checkout/pull/42|pull request>');
    expect(fields).toContain('merged by alice');
    expect(msg.text).toBe('Release rel-5 (checkout): InProgress. staging Healthy, prod Waiting');
  });

  it('calls the release of a Freight nobody announced by its alias, never by its 40-hex content name', () => {
    const name = '512fea34e78d2d31dc1e31cac67b507e66d4f279';
    const kargo = { freight: { name, alias: 'brave-lynx', images: ['checkout:1.29.0'], commits: [] }, verificationConfigured: false, targetAware: false, judged: 'healthy' as const };
    const dev = target('dev', { ref: { kind: 'KargoStage', cluster: 'prod', namespace: 'kargo-checkout', name: 'dev' }, phase: 'Healthy', kargo });
    const msg = renderParent(record({ releaseId: `freight-${name}`, idSource: 'freight', commit: undefined, pullRequestUrl: undefined, author: undefined, stages: [stage('staging', 'Healthy', [dev]), stage('prod', 'Waiting')] }), pipeline);
    expect(msg.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Release brave-lynx (Freight 512fea3) — checkout', emoji: false } });
    expect(msg.text).toMatch(/^Release brave-lynx \(Freight 512fea3\) \(checkout\): /);
    // Before any Stage told its alias: the short content name.
    const bare = renderParent(record({ releaseId: `freight-${name}`, idSource: 'freight', stages: [stage('staging', 'Waiting'), stage('prod', 'Waiting')] }), pipeline);
    expect(bare.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Release Freight 512fea34e78d — checkout', emoji: false } });
  });

  describe('an Application or ApplicationSet release (keyed revision-<sha>)', () => {
    const sha = 'b5960f1d5315a1f0e2d3c4b5a6978877665544aa';
    const appTarget = (env: string, images: string[]) =>
      target(`checkout-${env}`, { ref: { kind: 'Application', cluster: 'prod', namespace: 'argocd', name: `checkout-${env}` }, images, phase: 'Healthy', revision: sha });
    const appRelease = (overrides: Parameters<typeof record>[0] = {}) =>
      record({
        releaseId: `revision-${sha.slice(0, 12)}`,
        idSource: 'images',
        images: [],
        commit: undefined,
        pullRequestUrl: undefined,
        author: undefined,
        revision: sha,
        stages: [stage('staging', 'Healthy', [appTarget('staging', ['registry.example.com/shop/checkout:1.29.0'])]), stage('prod', 'Waiting', [appTarget('prod', ['registry.example.com/shop/checkout:1.29.0', 'registry.example.com/shop/sidecar@sha256:0123456789abcdef'])])],
        ...overrides,
      });

    it('is named by its commit and the image tags its children run, never revision-<hash>', () => {
      const msg = renderParent(appRelease(), pipeline);
      expect(msg.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Release commit b5960f1 (checkout:1.29.0, sidecar@sha256:0123456) — checkout', emoji: false } });
      expect(msg.text).toMatch(/^Release commit b5960f1 \(checkout:1\.29\.0, sidecar@sha256:0123456\) \(checkout\): /);
      expect(renderReply(reply('release-complete'), appRelease({ status: 'Complete' })).text).toContain('Release `commit b5960f1 (checkout:1.29.0, sidecar@sha256:0123456)` is complete');
    });

    it('is named by the CI release id once an announcement of its commit joined it', () => {
      const msg = renderParent(appRelease({ announcedAs: 'checkout-2026.08.20-1', idSource: 'announcement', commit: sha }), pipeline);
      expect(msg.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Release checkout-2026.08.20-1 — checkout', emoji: false } });
    });

    it('before any child said what it runs: the commit alone; many images: the first three and a count', () => {
      expect(renderParent(appRelease({ stages: [stage('staging', 'Waiting'), stage('prod', 'Waiting')] }), pipeline).blocks[0]).toMatchObject({ text: { text: 'Release commit b5960f1 — checkout' } });
      const many = ['a:1', 'b:2', 'c:3', 'd:4', 'e:5'].map((i) => `registry.example.com/${i}`);
      expect(renderParent(appRelease({ stages: [stage('staging', 'Healthy', [appTarget('staging', many)])] }), pipeline).blocks[0]).toMatchObject({ text: { text: 'Release commit b5960f1 (a:1, b:2, c:3 and 2 more) — checkout' } });
    });

    it('property: whatever the revision and images, the name shows the short commit and never the revision- key', () => {
      const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
      const image = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.stringMatching(/^[\w.-]{1,20}$/)).map(([n, t]) => `registry.example.com/team/${n}:${t}`);
      fc.assert(
        fc.property(hex, fc.array(image, { maxLength: 8 }), (rev, images) => {
          const r = appRelease({ releaseId: `revision-${rev.slice(0, 12)}`, revision: rev, stages: [stage('staging', 'Healthy', [appTarget('staging', images)])] });
          const header = (renderParent(r, pipeline).blocks[0] as { text: { text: string } }).text.text;
          expect(header).not.toContain('revision-');
          expect(header.startsWith(`Release commit ${rev.slice(0, 7)}`)).toBe(true);
          for (const i of images.slice(0, 3)) if (images.length <= 3) expect(header).toContain(imageTag(i));
        }),
      );
    });
  });

  it('leaves out what CI did not announce', () => {
    const msg = renderParent(record({ commit: undefined, pullRequestUrl: undefined, author: undefined, idSource: 'images' }), pipeline);
    const fields = JSON.stringify(msg.blocks[1]);
    expect(fields).not.toContain('Commit');
    expect(fields).not.toContain('pull request');
    expect(fields).not.toContain('merged by');
  });

  const icons: Record<StageStatus, string> = {
    Waiting: ':hourglass_flowing_sand:',
    Progressing: ':arrows_counterclockwise:',
    Paused: ':double_vertical_bar:',
    Healthy: ':white_check_mark:',
    Degraded: ':x:',
    Aborted: ':no_entry:',
    Stalled: ':warning:',
  };
  for (const [status, icon] of Object.entries(icons) as [StageStatus, string][]) {
    it(`draws a ${status} stage with its icon and word`, () => {
      const msg = renderParent(record({ stages: [stage('prod', status, [target('checkout')])] }), pipeline);
      expect(stageText(msg.blocks, 'prod').split('\n')[0]).toBe(`${icon} *prod* — ${status}`);
    });
  }

  it('shows the canary step k/N and weight of a paused stage, and what the Rollout says', () => {
    const paused = target('checkout', {
      phase: 'Paused',
      step: { index: 2, count: 8 },
      weight: 20,
      message: 'CanaryPauseStep',
      pause: { reason: 'CanaryPauseStep' },
    });
    const text = stageText(renderParent(record({ stages: [stage('prod', 'Paused', [paused])] }), pipeline).blocks, 'prod');
    expect(text).toContain(':double_vertical_bar: *prod* — Paused · step 3/8 · weight 20%');
    expect(text).toContain('• shop/checkout — Paused: CanaryPauseStep');
  });

  it('shows the step without N when the Rollout does not say how many steps it has', () => {
    const text = stageText(renderParent(record({ stages: [stage('prod', 'Progressing', [target('checkout', { step: { index: 1 } })])] }), pipeline).blocks, 'prod');
    expect(text.split('\n')[0]).toBe(':arrows_counterclockwise: *prod* — Progressing · step 2');
  });

  it('counts targets per phase when a stage has several ("3/5 Healthy")', () => {
    const targets = [
      target('a', { phase: 'Healthy' }),
      target('b', { phase: 'Healthy' }),
      target('c', { phase: 'Healthy' }),
      target('d', { phase: 'Paused', step: { index: 1, count: 4 } }),
      target('e', { phase: 'Progressing', step: { index: 3, count: 4 } }),
    ];
    const text = stageText(renderParent(record({ stages: [stage('prod', 'Paused', targets)] }), pipeline).blocks, 'prod');
    expect(text.split('\n')[0]).toBe(':double_vertical_bar: *prod* — Paused · steps 2–4/4 · 3/5 Healthy · 1 Progressing · 1 Paused');
  });

  it('counts targets that have not started this release in the denominator', () => {
    const text = stageText(
      renderParent(record({ stages: [stage('prod', 'Progressing', [target('a', { phase: 'Healthy' }), target('b')], { pending: ['prod/shop/c', 'prod/shop/d'] })] }), pipeline).blocks,
      'prod',
    );
    expect(text.split('\n')[0]).toContain('1/4 Healthy · 1 Progressing · 2 not started');
  });

  it('says a stage was healthy for this release once the latch is set, even while Progressing again', () => {
    const text = stageText(
      renderParent(record({ stages: [stage('prod', 'Progressing', [target('checkout')], { healthyAt: T0 })] }), pipeline).blocks,
      'prod',
    );
    expect(text).toContain('was healthy for this release');
    const never = stageText(renderParent(record({ stages: [stage('prod', 'Progressing', [target('checkout')])] }), pipeline).blocks, 'prod');
    expect(never).not.toContain('was healthy');
  });

  it('says which release took over a stage whose targets all moved on', () => {
    const movedOn = stage('prod', 'Healthy', [target('checkout', { supersededBy: 'rel-6' }), target('checkout-worker', { supersededBy: 'rel-6' })], { healthyAt: T0 });
    expect(stageText(renderParent(record({ stages: [movedOn] }), pipeline).blocks, 'prod')).toContain('moved on to `rel-6`');
    const partly = stage('prod', 'Healthy', [target('checkout', { supersededBy: 'rel-6' }), target('checkout-worker')]);
    expect(stageText(renderParent(record({ stages: [partly] }), pipeline).blocks, 'prod')).not.toContain('moved on');
  });

  it('shows when the stage last heard a fact as a Slack date (each reader sees their own time zone)', () => {
    const text = stageText(renderParent(record(), pipeline).blocks, 'staging');
    expect(text).toContain(`last heard <!date^${(T0 + 60_000) / 1000}^{date_short_pretty} {time}|2026-11-29 12:01 UTC>`);
  });

  it('shows scale and restart events on the parent only', () => {
    const msg = renderParent(
      record({ events: [{ at: T0, kind: 'scale', target: 'prod/shop/checkout', detail: 'replicas 3 → 6' }] }),
      pipeline,
    );
    expect(JSON.stringify(msg.blocks.at(-1))).toContain('scale of prod/shop/checkout: replicas 3 → 6');
  });

  it('renders an unchanged record to identical output', () => {
    const r = record({ stages: [stage('prod', 'Paused', [target('x', { phase: 'Paused', message: 'm' }), target('y')])] });
    const again = structuredClone(r);
    // Insertion order of targets must not matter either.
    again.stages[0]!.targets = Object.fromEntries(Object.entries(r.stages[0]!.targets).reverse());
    expect(renderParent(again, pipeline)).toEqual(renderParent(r, pipeline));
  });

  it('renders a heartbeat seconds later identically (dates show minutes), so nothing is sent for it', () => {
    const a = record({ lastHeardAt: T0 + 5_000 });
    const b = record({ lastHeardAt: T0 + 42_000 });
    expect(renderParent(b, pipeline)).toEqual(renderParent(a, pipeline));
    expect(renderParent(record({ lastHeardAt: T0 + 61_000 }), pipeline)).not.toEqual(renderParent(a, pipeline));
  });

  it('matches the reviewed layout', () => {
    const paused = target('checkout', { phase: 'Paused', step: { index: 2, count: 8 }, weight: 20, message: 'CanaryPauseStep' });
    expect(renderParent(record({ stages: [stage('staging', 'Healthy', [target('s', { phase: 'Healthy' })], { healthyAt: T0 }), stage('prod', 'Paused', [paused])] }), pipeline)).toMatchSnapshot();
  });

  describe('hostile input from the cluster', () => {
    it('escapes mentions and broadcasts in every cluster text', () => {
      const evil = '<!channel> <@U123> <!here|here> <#C999> <http://evil.example|click> & more';
      const msg = renderParent(
        record({
          releaseId: '<!channel>',
          images: [evil],
          author: '<@U123>',
          commit: '<!here>',
          pullRequestUrl: 'javascript:alert(1)',
          stages: [stage('prod', 'Degraded', [target('checkout', { phase: 'Degraded', message: evil })])],
          events: [{ at: T0, kind: 'restart', target: evil, detail: evil }],
        }),
        pipeline,
      );
      expectNoPings(msg.blocks);
      expect(JSON.stringify(msg.blocks)).toContain('&lt;!channel&gt; &lt;@U123&gt;');
      expect(msg.text).not.toContain('<!channel>');
    });

    it('bounds a 100 KB Rollout message with a visible truncation marker', () => {
      const huge = 'x'.repeat(100 * 1024);
      const msg = renderParent(
        record({ stages: [stage('prod', 'Degraded', [target('checkout', { phase: 'Degraded', message: huge })])], images: [huge] }),
        pipeline,
      );
      expectWithinSlackLimits(msg.blocks, msg.text);
      expect(JSON.stringify(msg.blocks)).toContain(TRUNCATED);
    });

    it('bounds a stage of 500 targets and keeps the counts exact', () => {
      const targets = Array.from({ length: 500 }, (_, i) =>
        target(`checkout-${String(i).padStart(3, '0')}`, { phase: i % 5 === 0 ? 'Degraded' : 'Healthy', message: '<!channel> '.repeat(50) }),
      );
      const msg = renderParent(record({ stages: [stage('prod', 'Degraded', targets)] }), pipeline);
      expectWithinSlackLimits(msg.blocks, msg.text);
      expectNoPings(msg.blocks);
      const text = stageText(msg.blocks, 'prod');
      expect(text).toContain('400/500 Healthy · 100 Degraded');
      expect(text).toContain('• and 92 more');
    });

    it('bounds 80 stages to 50 blocks with a visible marker', () => {
      const stages = Array.from({ length: 80 }, (_, i) => stage(`s${i}`, 'Waiting'));
      const msg = renderParent(record({ stages }), pipelineConfig('checkout', 'C0CHECKOUT', stages.map((s) => s.name)));
      expectWithinSlackLimits(msg.blocks, msg.text);
      expect(JSON.stringify(msg.blocks.at(-1))).toContain(TRUNCATED);
    });

    it('keeps many long stage rows under the total budget', () => {
      const stages = Array.from({ length: 40 }, (_, i) =>
        stage(`s${i}`, 'Degraded', [target(`t${i}`, { phase: 'Degraded', message: 'y'.repeat(2000) })]),
      );
      const msg = renderParent(record({ stages }), pipeline);
      expectWithinSlackLimits(msg.blocks, msg.text);
    });
  });
});
