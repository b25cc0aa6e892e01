import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canaryStepLabel,
  deriveRolloutState,
  type CanaryStep,
  type Rollout,
} from '../../src/model/rollout-state.js';
import { ARGOCD_ROLLOUT_CUSTOMIZATIONS, payloadRollout as payload, readYaml, REFERENCE, STEPS, unparsed } from '../helpers/rollout-bodies.js';

const CUSTOMIZATIONS = ARGOCD_ROLLOUT_CUSTOMIZATIONS;
const UPSTREAM_ROLLOUTS = path.join(REFERENCE, 'upstream/rollouts');

type Json = Record<string, unknown>;

const upstream = (name: string): Rollout => JSON.parse(fs.readFileSync(path.join(UPSTREAM_ROLLOUTS, name), 'utf8')) as Rollout;

const PAYLOAD_STEPS: CanaryStep[] = STEPS;

describe('the webhook payload fixtures', () => {
  it('paused.json: paused at step 1 of 7 on CanaryPauseStep, at 20%', () => {
    const state = deriveRolloutState(payload('paused'));
    expect(state).toMatchObject({
      observed: true,
      phase: 'Paused',
      message: 'CanaryPauseStep',
      argoHealth: { status: 'Suspended', message: 'CanaryPauseStep' },
      pause: { reason: 'CanaryPauseStep', since: '2026-08-20T09:13:11Z' },
      aborted: false,
      weight: 20,
      fullyPromoted: false,
      podHash: '7c9d6b5f48',
      stableHash: '59c8fd7b64',
    });
    expect(state.actions).toMatchObject({ resume: true, abort: true, retry: false, promoteFull: true });
    // The body carries no spec.strategy: the position is known, the step list is not.
    expect(state.step).toEqual({ index: 1 });
    expect(deriveRolloutState(payload('paused'), { steps: PAYLOAD_STEPS }).step).toEqual({ index: 1, count: 7, label: 'pause' });
  });

  it('healthy.json: fully promoted, every step done, all traffic on the new version', () => {
    const state = deriveRolloutState(payload('healthy'), { steps: PAYLOAD_STEPS });
    expect(state).toMatchObject({
      observed: true,
      phase: 'Healthy',
      message: '',
      argoHealth: { status: 'Healthy', message: '' },
      aborted: false,
      step: { index: 7, count: 7 },
      fullyPromoted: true,
      weight: 100,
    });
    expect(state.pause).toBeUndefined();
    expect(state.step?.label).toBeUndefined();
    expect(state.actions).toMatchObject({ resume: false, abort: false, retry: false, promoteFull: false });
  });

  it('aborted.json: Degraded, not paused although the Paused condition is still True', () => {
    const rollout = payload('aborted');
    const pausedCondition = rollout.status?.conditions?.find((c) => c.type === 'Paused');
    expect(pausedCondition?.status).toBe('True');

    const state = deriveRolloutState(rollout, { steps: PAYLOAD_STEPS });
    expect(state.phase).toBe('Degraded');
    expect(state.message).toMatch(/^RolloutAborted:/);
    expect(state.argoHealth.status).toBe('Degraded');
    expect(state.pause).toBeUndefined();
    expect(state).toMatchObject({ aborted: true, abortedAt: '2026-08-20T09:31:47Z', weight: 0 });
    expect(state.step).toEqual({ index: 0, count: 7, label: 'setWeight: 20' });
    expect(state.actions).toMatchObject({ resume: false, abort: false, retry: true });
  });

  it('stale.json: generation 12 not yet observed, so nothing in it is trusted', () => {
    const state = deriveRolloutState(payload('stale'));
    expect(state.observed).toBe(false);
    expect(state.phase).toBe('Progressing');
    expect(state.message).toBe('waiting for rollout spec update to be observed');
    expect(state.argoHealth.status).toBe('Progressing');
  });

  it('a manual pause shows only in the phase of a webhook body (it carries no spec.paused)', () => {
    const rollout = payload('paused');
    const status = { ...rollout.status, pauseConditions: undefined, controllerPause: undefined, message: 'manually paused' };
    expect(deriveRolloutState({ ...rollout, status }).pause).toEqual({ reason: 'manually paused' });
  });

  it('a user who cleared the pause conditions is waiting for the controller, not for a person', () => {
    const rollout = payload('paused');
    const state = deriveRolloutState({ ...rollout, status: { ...rollout.status, pauseConditions: [] } });
    expect(state.phase).toBe('Progressing');
    expect(state.message).toBe('waiting for rollout to unpause');
    expect(state.pause).toBeUndefined();
  });
});

describe('the upstream Rollouts (v0.x, no status.phase)', () => {
  const files = fs.readdirSync(UPSTREAM_ROLLOUTS).filter((f) => f.endsWith('.json'));

  it('finds all 11', () => {
    expect(files).toHaveLength(11);
  });

  it.each(files)('%s gets a sensible state', (file) => {
    const state = deriveRolloutState(upstream(file));
    expect(state.observed).toBe(true);
    expect(['Healthy', 'Progressing', 'Paused', 'Degraded']).toContain(state.phase);
    expect(state.message).not.toBe('');
    expect(['Healthy', 'Progressing', 'Suspended', 'Degraded']).toContain(state.argoHealth.status);
    expect(state.phase).toBe(state.argoHealth.status === 'Suspended' ? 'Paused' : state.argoHealth.status);
  });

  it.each([
    'canary-demo.json',
    'canary-demo-workloadref.json',
    'canary-demo-workloadref-deploy.json',
    'canary-demo-pingpong.json',
    'canary-demo-weights.json',
    'canary-demo-weights-na.json',
  ])('%s: past its progress deadline is Degraded, at step 0 (setWeight: 20) of 8', (file) => {
    const state = deriveRolloutState(upstream(file));
    expect(state.phase).toBe('Degraded');
    expect(state.message).toBe('ProgressDeadlineExceeded: ReplicaSet "canary-demo-65fb5ffc84" has timed out progressing.');
    expect(state.step).toEqual({ index: 0, count: 8, label: 'setWeight: 20' });
    expect(state.weight).toBe(20);
    expect(state.pause).toBeUndefined();
    expect(state.actions).toMatchObject({ resume: false, abort: true, retry: false });
  });

  it('rollout-background-analysis-aborted.json: aborted by a failed analysis', () => {
    const state = deriveRolloutState(upstream('rollout-background-analysis-aborted.json'));
    expect(state.phase).toBe('Degraded');
    expect(state.message).toMatch(/^RolloutAborted: metric "web" assessed Failed/);
    expect(state).toMatchObject({ aborted: true, abortedAt: '2020-09-22T09:10:05Z', weight: 0 });
    expect(state.actions).toMatchObject({ abort: false, retry: true, resume: false });
  });

  it('rollout-invalid.json: an invalid spec is Degraded, and no hash means nothing to promote', () => {
    const state = deriveRolloutState(upstream('rollout-invalid.json'));
    expect(state.phase).toBe('Degraded');
    expect(state.message).toMatch(/^InvalidSpec: The Rollout "rollout-invalid" is invalid/);
    expect(state.fullyPromoted).toBe(false);
    expect(state.step).toBeUndefined();
    expect(state.weight).toBeUndefined();
  });

  it('bluegreen-demo.json: paused before promotion, waiting for a person', () => {
    const state = deriveRolloutState(upstream('bluegreen-demo.json'));
    expect(state.phase).toBe('Paused');
    expect(state.message).toBe('BlueGreenPause');
    expect(state.pause).toEqual({ reason: 'BlueGreenPause', since: '2019-10-28T04:50:20Z' });
    expect(state.step).toBeUndefined();
    expect(state.weight).toBeUndefined();
    expect(state.actions).toMatchObject({ resume: true, abort: true, promoteFull: true });
  });

  it('rollout-experiment-analysis.json: an inconclusive analysis waits for a person, even past the deadline', () => {
    const state = deriveRolloutState(upstream('rollout-experiment-analysis.json'));
    // The controller's rules put the progress deadline first; the pause is still there to resume.
    expect(state.phase).toBe('Degraded');
    expect(state.message).toMatch(/^ProgressDeadlineExceeded:/);
    expect(state.pause).toEqual({ reason: 'InconclusiveAnalysisRun', since: '2019-10-30T16:13:40Z' });
    expect(state.step).toEqual({ index: 1, count: 2, label: 'experiment' });
    expect(state.weight).toBe(25);
    expect(state.actions.resume).toBe(true);
  });

  it('experiment-step-canary-demo.json: running an experiment step, before any setWeight', () => {
    const state = deriveRolloutState(upstream('experiment-step-canary-demo.json'));
    expect(state.phase).toBe('Progressing');
    expect(state.message).toBe('more replicas need to be updated');
    expect(state.step).toEqual({ index: 0, count: 1, label: 'experiment' });
    expect(state.weight).toBe(0);
  });

  it('uses the weight traffic routing reports over the one the steps ask for', () => {
    const rollout = upstream('canary-demo-weights.json') as Json & Rollout;
    const status = { ...rollout.status, canary: { weights: { canary: { weight: 7 }, stable: { weight: 93 } } } };
    expect(deriveRolloutState({ ...rollout, status }).weight).toBe(7);
  });
});

describe('generation observed (rule A)', () => {
  const at = (generation: number | string | undefined, observedGeneration: unknown): boolean =>
    deriveRolloutState(unparsed({ metadata: { generation }, status: { observedGeneration } })).observed;

  it.each([
    [12, '12', true],
    ['12', '12', true],
    [12, 12, true],
    [12, '11', false],
    [12, '', false],
    [12, undefined, false],
    [12, '7bcdbf7bd9', true], // pre-v0.10 hash
    [1, '8575574967', true], // pre-v0.10 hash made only of digits
  ])('generation %s, observedGeneration %s: %s', (generation, observed, expected) => {
    expect(at(generation, observed)).toBe(expected);
  });

  it('a Rollout without status has not been observed', () => {
    expect(deriveRolloutState(unparsed({ metadata: { generation: 1 } })).observed).toBe(false);
  });

  it('a lagging referenced workload keeps the Rollout Progressing', () => {
    const rollout = unparsed({
      metadata: { generation: 3, annotations: { 'rollout.argoproj.io/workload-generation': '2' } },
      spec: { workloadRef: { kind: 'Deployment', name: 'x' } },
      status: { observedGeneration: '3', workloadObservedGeneration: '1', phase: 'Healthy' },
    });
    expect(deriveRolloutState(rollout)).toMatchObject({
      observed: true,
      phase: 'Progressing',
      message: 'waiting for rollout spec update to be observed for the reference workload',
    });
  });
});

describe('phase of Rollouts without status.phase (controller rules)', () => {
  const legacy = (spec: Json, status: Json): Rollout =>
    unparsed({
      metadata: { generation: 2 },
      spec: { replicas: 2, strategy: { canary: { steps: [{ setWeight: 50 }] } }, ...spec },
      status: { observedGeneration: '2', conditions: [], currentPodHash: 'new', stableRS: 'old', replicas: 2, updatedReplicas: 2, availableReplicas: 2, ...status },
    });

  it.each([
    ['manual pause wins over a pause condition', { paused: true }, { pauseConditions: [{ reason: 'CanaryPauseStep' }] }, 'Paused', 'manually paused'],
    ['restart pending', { restartAt: '2026-08-20T09:00:00Z' }, {}, 'Progressing', 'rollout is restarting'],
    ['restart done', { restartAt: '2026-08-20T09:00:00Z' }, { restartedAt: '2026-08-20T09:00:00.000Z', stableRS: 'new' }, 'Healthy', ''],
    ['replicas to update', {}, { updatedReplicas: 1 }, 'Progressing', 'more replicas need to be updated'],
    ['replicas to become available', {}, { availableReplicas: 1 }, 'Progressing', 'updated replicas are still becoming available'],
    ['old replicas to terminate', {}, { replicas: 3 }, 'Progressing', 'old replicas are pending termination'],
    ['steps to go', {}, {}, 'Progressing', 'waiting for all steps to complete'],
  ] as const)('%s', (_name, spec, status, phase, message) => {
    const state = deriveRolloutState(legacy(spec, status));
    expect(state.phase).toBe(phase);
    expect(state.message).toBe(message);
  });

  it('a blue-green Rollout waits for its post-promotion analysis, then for verification', () => {
    const rollout = (analysis: unknown): Rollout =>
      unparsed({
      metadata: { generation: 1 },
      spec: { replicas: 1, strategy: { blueGreen: { postPromotionAnalysis: { templates: [] } } } },
      status: {
        observedGeneration: '1',
        conditions: [],
        currentPodHash: 'new',
        stableRS: 'old',
        updatedReplicas: 1,
        availableReplicas: 1,
        blueGreen: { activeSelector: 'new', postPromotionAnalysisRunStatus: analysis },
      },
    });
    expect(deriveRolloutState(rollout({ name: 'a', status: 'Running' })).message).toBe('waiting for analysis to complete');
    expect(deriveRolloutState(rollout({ name: 'a', status: 'Successful' })).message).toBe(
      'waiting for post-promotion verification to complete',
    );
  });

  it('an unrecognised phase from the controller is Unknown, not guessed', () => {
    const state = deriveRolloutState(unparsed({ metadata: { generation: 1 }, status: { observedGeneration: '1', phase: 'Exploded' } }));
    expect(state.phase).toBe('Unknown');
    expect(state.argoHealth.status).toBe('Unknown');
  });

  it('a v0.x Rollout without conditions is Unknown to Argo CD (its health script fails on it)', () => {
    const state = deriveRolloutState(unparsed({ metadata: { generation: 1 }, spec: { strategy: { canary: {} } }, status: { observedGeneration: '1' } }));
    expect(state.argoHealth.status).toBe('Unknown');
    expect(state.phase).toBe('Progressing');
  });
});

describe("Argo CD's reading of odd objects", () => {
  const base = (status: Json, spec: Json = {}): Rollout =>
    unparsed({
      metadata: { generation: 1 },
      spec: { replicas: 1, strategy: { canary: { steps: [{ pause: {} }] } }, ...spec },
      status: { observedGeneration: '1', currentPodHash: 'new', stableRS: 'old', updatedReplicas: 1, availableReplicas: 1, ...status },
    });

  it('an empty pauseConditions list hides spec.paused from the resume action, not from health', () => {
    const state = deriveRolloutState(base({ conditions: [], pauseConditions: [] }, { paused: true }));
    expect(state.actions.resume).toBe(false);
    expect(state.argoHealth).toEqual({ status: 'Suspended', message: 'Rollout is paused' });
    expect(state.phase).toBe('Paused');
    expect(state.pause).toEqual({ reason: 'manually paused' });
  });

  it('null entries of a list do not count (Argo CD drops them when it converts the object)', () => {
    const state = deriveRolloutState(base({ conditions: [null, { type: 'InvalidSpec', message: 'bad' }], pauseConditions: [null] }));
    expect(state.argoHealth).toEqual({ status: 'Degraded', message: 'bad' });
    expect(state.actions.resume).toBe(false);
  });
});

describe('step analysis and labels', () => {
  it('reports the current step analysis run', () => {
    const rollout = payload('paused');
    const status = {
      ...rollout.status,
      canary: { currentStepAnalysisRunStatus: { name: 'checkout-7c9d6b5f48-4-4', status: 'Running' } },
    };
    expect(deriveRolloutState({ ...rollout, status }).analysis).toEqual({ name: 'checkout-7c9d6b5f48-4-4', status: 'Running' });
    expect(deriveRolloutState(rollout).analysis).toBeUndefined();
  });

  it.each([
    [{ setWeight: 20 }, 'setWeight: 20'],
    [{ pause: {} }, 'pause'],
    [{ pause: { duration: '10m' } }, 'pause: 10m'],
    [{ pause: { duration: 30 } }, 'pause: 30'],
    [{ analysis: { templates: [] } }, 'analysis'],
    [{ experiment: { templates: [] } }, 'experiment'],
    [{ setCanaryScale: { weight: 10 } }, 'setCanaryScale{weight: 10}'],
    [{ setCanaryScale: { matchTrafficWeight: true } }, 'setCanaryScale{matchTrafficWeight: true}'],
    [{ setHeaderRoute: { name: 'h' } }, 'setHeaderRoute: h'],
    [{ plugin: { name: 'p' } }, 'plugin: p'],
    [{}, 'invalid'],
  ])('%j reads %s', (step, label) => {
    expect(canaryStepLabel(step)).toBe(label);
  });
});

describe('robustness', () => {
  it('never throws, whatever the object holds', () => {
    const anyObject = fc.record(
      {
        metadata: fc.oneof(fc.anything(), fc.record({ generation: fc.oneof(fc.integer(), fc.string()) })),
        spec: fc.anything(),
        status: fc.oneof(
          fc.anything(),
          fc.record(
            {
              phase: fc.anything(),
              observedGeneration: fc.anything(),
              conditions: fc.anything(),
              pauseConditions: fc.anything(),
              currentStepIndex: fc.anything(),
              canary: fc.anything(),
              blueGreen: fc.anything(),
              currentPodHash: fc.anything(),
              stableRS: fc.anything(),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(anyObject, (rollout) => {
        const state = deriveRolloutState(unparsed(rollout));
        expect(['Healthy', 'Progressing', 'Paused', 'Degraded', 'Unknown']).toContain(state.phase);
        expect(['Healthy', 'Progressing', 'Suspended', 'Degraded', 'Unknown']).toContain(state.argoHealth.status);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a canary without steps', () => {
  const noSteps = (file: string) => readYaml(path.join(CUSTOMIZATIONS, 'testdata/canary', file)) as Json & Rollout;

  it('is at weight 100, as `kubectl argo rollouts get` says, while it rolls out and once done', () => {
    // New pods are coming up (the old ReplicaSet is being killed): no step holds traffic back.
    const rolling = deriveRolloutState(noSteps('progressing_killingOldReplicas.yaml'));
    expect(rolling.fullyPromoted).toBe(false);
    expect(rolling.step).toBeUndefined();
    expect(rolling.weight).toBe(100);
    expect(deriveRolloutState(noSteps('healthy_emptyStepsList.yaml')).weight).toBe(100);
    expect(deriveRolloutState(noSteps('healthy_noSteps.yaml')).weight).toBe(100);
  });

  it('is at weight 0 once aborted, and unknown from a body that carries no spec.strategy', () => {
    const rollout = noSteps('progressing_killingOldReplicas.yaml');
    expect(deriveRolloutState({ ...rollout, status: { ...rollout.status, abort: true } } as Rollout).weight).toBe(0);
    const { strategy: _strategy, ...specWithoutStrategy } = rollout.spec as Json;
    expect(deriveRolloutState({ ...rollout, spec: specWithoutStrategy } as Rollout).weight).toBeUndefined();
  });
});
