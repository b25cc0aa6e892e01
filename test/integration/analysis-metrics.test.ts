/**
 * A step analysis that fails, and one that ends inconclusive, in the Rollouts simulator (which
 * creates real AnalysisRun objects with measured values): the thread names each failing metric,
 * the values it measured and the condition they were judged by. Glidepath watches the stand-in
 * cluster and reads the AnalysisRun as its service account (the shipped RBAC).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0ANALYSIS';
const STEPS = [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'success-rate' }] } }, { setWeight: 50 }];

describe('a failed or inconclusive analysis in the thread', () => {
  let world: WatchedWorld;
  /**
   * Each reply's whole text, its sections' (the fallback `text` is its first line only). Not the
   * first block's: a reply that lands after the parent said Aborted (the failed analysis is what
   * aborts) opens with a "posted late" context line.
   */
  const replies = () =>
    world.replies().map((r) => ({ text: r.blocks.flatMap((b) => ((b as { type: string }).type === 'section' ? [(b as { text?: { text?: string } }).text?.text ?? ''] : [])).join('\n') || r.text }));

  beforeAll(async () => {
    // The new version of checkout fails its analysis; cart's is inconclusive.
    world = await startWatchedWorld({
      channel: CHANNEL,
      steps: STEPS,
      rollouts: { analysisMs: 5_000, analysisOutcome: (rollout) => ({ phase: rollout.metadata.name === 'checkout' ? 'Failed' : 'Inconclusive' }) },
    });
    for (const name of ['checkout', 'cart']) world.deploy(name, '1.0.0', 'rel-1');
    await world.runFor(5_000);
    await waitFor(async () => (await world.app.store.get('shop', 'rel-1'))?.stages[0]?.healthyAt ?? undefined, 'rel-1 healthy');
    for (const name of ['checkout', 'cart']) world.deploy(name, '2.0.0', 'rel-2');
    await world.runFor(15_000);
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('a failed analysis: the reply names the metric, its measured value and the failure condition', async () => {
    const reply = await waitFor(async () => replies().find((r) => r.text.includes('prod/shop/checkout') && r.text.includes('the analysis failed')), 'analysis-failed reply');
    expect(reply.text).toContain('• `success-rate` Failed: measured `[0.82]`; failure condition `result[0] &lt; 0.9`'); // `<` escaped for Slack's mrkdwn
  }, 30_000);

  it('an inconclusive analysis: the paused reply says what was measured, against which condition', async () => {
    const reply = await waitFor(async () => replies().find((r) => r.text.includes('prod/shop/cart') && r.text.includes('waits for approval')), 'paused reply');
    expect(reply.text).toContain('InconclusiveAnalysisRun');
    expect(reply.text).toContain('• `success-rate` Inconclusive: measured `[0.93]`; failure condition `result[0] &lt; 0.9`'); // `<` escaped for Slack's mrkdwn
  }, 30_000);
});
