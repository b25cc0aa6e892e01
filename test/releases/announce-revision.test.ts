/**
 * A CI announcement whose commit is an ApplicationSet release's revision joins that release, so
 * the thread is named by CI's id (src/releases/worker/kargo-announce.ts), through the worker's batch step.
 */
import { describe, expect, it } from 'vitest';
import type { ReleaseAnnouncedFact } from '../../src/facts/fact.js';
import { joinedRelease } from '../../src/releases/worker/kargo-announce.js';
import { reduceReleaseBatch } from '../../src/releases/worker/reducer-worker.js';
import { renderParent } from '../../src/slack/render/parent.js';
import { pipelineConfig, record } from '../slack/support/records.js';
import { kargoShopConfig } from '../helpers/kargo-facts.js';

const SHA = 'b5960f1d5315a1f0e2d3c4b5a6978877665544aa';
const config = kargoShopConfig({ dev: 'stage: dev', prod: 'selector: "tier=prod"' });
const announcement = (releaseId: string, commit = SHA): ReleaseAnnouncedFact => ({
  kind: 'release',
  source: 'ci',
  receivedAt: Date.parse('2026-08-20T09:05:00Z'),
  pipeline: 'shop',
  releaseId,
  images: ['registry.example.com/shop/checkout:1.29.0'],
  commit,
});

describe('a CI announcement of an ApplicationSet release\'s commit', () => {
  const revisionRelease = record({ pipeline: 'shop', releaseId: `revision-${SHA.slice(0, 12)}`, idSource: 'images', images: [], commit: undefined, pullRequestUrl: undefined, author: undefined, revision: SHA });

  it('joins the revision release, and the thread is named by CI\'s id', () => {
    expect(joinedRelease(announcement('checkout-2026.08.20-1'), revisionRelease, undefined)).toBe(revisionRelease.releaseId);
    // CI's id already has a release of its own: no join.
    expect(joinedRelease(announcement('checkout-2026.08.20-1'), revisionRelease, { ...revisionRelease, releaseId: 'checkout-2026.08.20-1' })).toBeUndefined();
    const route = { pipeline: config.pipelines.find((p) => p.name === 'shop')!, releaseId: revisionRelease.releaseId };
    const step = reduceReleaseBatch(structuredClone(revisionRelease), [{ fact: announcement('checkout-2026.08.20-1'), route }], { config, knownTargets: {}, previousOfTarget: new Map<string, string>() });
    expect(step.outcomes).toEqual(['applied']);
    expect(step.record).toMatchObject({ releaseId: revisionRelease.releaseId, announcedAs: 'checkout-2026.08.20-1', commit: SHA });
    expect(renderParent(step.record!, pipelineConfig('shop')).blocks[0]).toMatchObject({ text: { text: 'Release checkout-2026.08.20-1 — shop' } });
  });
});
