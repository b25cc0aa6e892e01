import { describe, expect, it } from 'vitest';
import { analysisRunSchema, failingMetrics } from '../../src/model/analysis-run.js';
import { renderReply } from '../../src/slack/render/reply.js';
import { expectNoPings, expectWithinSlackLimits } from '../slack/render/limits.js';
import { record, reply } from '../slack/support/records.js';

/** An AnalysisRun as the Rollouts controller writes it after a failed step analysis (two metrics, one failed). */
const failedRun = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'checkout-7c9d6b5f48-4-4', namespace: 'shop', resourceVersion: '812' },
  spec: {
    metrics: [
      { name: 'success-rate', successCondition: 'result[0] >= 0.95', failureLimit: 1, provider: { prometheus: { query: 'x' } } },
      { name: 'latency-p99', failureCondition: 'result[0] > 0.5', provider: { prometheus: { query: 'y' } } },
    ],
  },
  status: {
    phase: 'Failed',
    message: 'Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1)',
    metricResults: [
      { name: 'success-rate', phase: 'Failed', count: 3, failed: 2, measurements: [{ phase: 'Successful', value: '[0.97]' }, { phase: 'Failed', value: '[0.91]' }, { phase: 'Failed', value: '[0.88]' }] },
      { name: 'latency-p99', phase: 'Successful', count: 3, successful: 3, measurements: [{ phase: 'Successful', value: '[0.21]' }] },
    ],
  },
};

describe('failing metrics of an AnalysisRun', () => {
  it('names the failing metric, its last values and the condition they missed; passing metrics are left out', () => {
    const run = analysisRunSchema.parse(failedRun);
    expect(failingMetrics(run)).toEqual([{ name: 'success-rate', phase: 'Failed', values: ['[0.97]', '[0.91]', '[0.88]'], condition: 'result[0] >= 0.95', conditionKind: 'success' }]);
  });

  it('an errored metric has no value but says why', () => {
    const run = { ...failedRun, status: { phase: 'Error', metricResults: [{ name: 'latency-p99', phase: 'Error', measurements: [{ phase: 'Error', message: 'connection refused' }] }] } };
    expect(failingMetrics(run)).toEqual([{ name: 'latency-p99', phase: 'Error', values: [], condition: 'result[0] > 0.5', conditionKind: 'failure', message: 'connection refused' }]);
  });

  it('never throws on an odd object, and is bounded (10 metrics, 5 values each)', () => {
    for (const odd of [undefined, null, 3, 'x', {}, { status: { metricResults: 'no' } }, { status: { metricResults: [null, { name: 1 }] } }]) expect(failingMetrics(odd)).toEqual([]);
    const many = { status: { metricResults: Array.from({ length: 30 }, (_, i) => ({ name: `m${i}`, phase: 'Failed', measurements: Array.from({ length: 20 }, (__, j) => ({ phase: 'Failed', value: String(j) })) })) } };
    const metrics = failingMetrics(many);
    expect(metrics).toHaveLength(10);
    expect(metrics[0]!.values).toEqual(['15', '16', '17', '18', '19']);
  });

  it('keeps the measurements over time for the chart: finishedAt (else startedAt) and value, the last 30', () => {
    const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 10, i)).toISOString();
    const measurements = Array.from({ length: 40 }, (_, i) => ({ phase: 'Successful', value: `[${i}]`, ...(i % 2 ? { finishedAt: at(i) } : { startedAt: at(i) }) }));
    const run = { ...failedRun, status: { phase: 'Failed', metricResults: [{ name: 'success-rate', phase: 'Failed', measurements: [...measurements, { phase: 'Failed', value: '[9]' }] }] } };
    const [metric] = failingMetrics(run);
    expect(metric!.points).toHaveLength(30);
    expect(metric!.points![0]).toEqual({ at: Date.parse(at(10)), value: '[10]' });
    expect(metric!.points![29]).toEqual({ at: Date.parse(at(39)), value: '[39]' }); // the last one has no time: not drawn
  });

  it('renders each metric escaped and within Slack limits, whatever the provider returned', () => {
    const metrics = Array.from({ length: 10 }, (_, i) => ({ name: `<!channel> m${i}`, phase: 'Failed', values: ['<!here>'.repeat(500)], condition: 'result[0] < 0.9 <@U1>', conditionKind: 'failure' as const, message: '<!everyone>' }));
    const msg = renderReply(reply('analysis-failed', { metrics }), record());
    expectNoPings(msg.blocks);
    expectWithinSlackLimits(msg.blocks, msg.text);
  });
});
