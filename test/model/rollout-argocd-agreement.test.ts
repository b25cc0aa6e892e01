/** Glidepath's reading of Rollouts agrees with Argo CD's own Lua health check and resource actions (their upstream test files). */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  deriveRolloutState,
  rolloutActionPatch,
  type RolloutActionName,
  type RolloutActions,
} from '../../src/model/rollout-state.js';
import { ARGOCD_ROLLOUT_CUSTOMIZATIONS, payloadRollout as payload, readYaml, unparsed } from '../helpers/rollout-bodies.js';

const CUSTOMIZATIONS = ARGOCD_ROLLOUT_CUSTOMIZATIONS;
const ACTIONS = path.join(CUSTOMIZATIONS, 'actions');

type Json = Record<string, unknown>;

describe('agrees with Argo CD health on every case of health_test.yaml', () => {
  const { tests } = readYaml(path.join(CUSTOMIZATIONS, 'health_test.yaml')) as {
    tests: { inputPath: string; healthStatus: { status: string; message?: string } }[];
  };

  it('covers the whole table', () => {
    expect(tests).toHaveLength(24);
  });

  it.each(tests.map((t) => [t.inputPath, t.healthStatus] as const))('%s', (inputPath, expected) => {
    const state = deriveRolloutState(unparsed(readYaml(path.join(CUSTOMIZATIONS, inputPath))));
    expect(state.argoHealth).toEqual({ status: expected.status, message: expected.message ?? '' });
    // The Rollouts-side phase names the same state (Argo CD calls Paused "Suspended").
    expect(state.phase).toBe(expected.status === 'Suspended' ? 'Paused' : expected.status);
  });
});

describe('offers the actions Argo CD offers (actions/action_test.yaml discoveryTests)', () => {
  const { discoveryTests } = readYaml(path.join(ACTIONS, 'action_test.yaml')) as {
    discoveryTests: { inputPath: string; result: { name: string; disabled: boolean }[] }[];
  };
  const NAMES: Record<string, keyof RolloutActions> = {
    resume: 'resume',
    abort: 'abort',
    retry: 'retry',
    'promote-full': 'promoteFull',
    pause: 'pause',
    'skip-current-step': 'skipCurrentStep',
    restart: 'restart',
  };

  it('covers every discovery case', () => {
    expect(discoveryTests).toHaveLength(9);
  });

  it.each(discoveryTests.map((t) => [t.inputPath, t.result] as const))('%s', (inputPath, result) => {
    const { actions } = deriveRolloutState(unparsed(readYaml(path.join(ACTIONS, inputPath))));
    const expected = Object.fromEntries(result.map((r) => [NAMES[r.name] ?? r.name, !r.disabled]));
    expect(actions).toEqual(expected);
  });
});

/** RFC 7386 JSON merge patch, as the API server applies it. */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** A stored null and an absent field are the same thing to the API server and the controller. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

describe('action patches produce the objects of actions/action_test.yaml', () => {
  const { actionTests } = readYaml(path.join(ACTIONS, 'action_test.yaml')) as {
    actionTests: { action: string; inputPath: string; expectedOutputPath: string }[];
  };
  const OURS: Record<string, RolloutActionName> = { resume: 'resume', abort: 'abort', retry: 'retry', 'promote-full': 'promoteFull' };
  const cases = actionTests.filter((t) => OURS[t.action]);

  it('covers every resume, abort, retry and promote-full case', () => {
    expect(cases.map((t) => t.action).sort()).toEqual(['abort', 'promote-full', 'promote-full', 'resume', 'resume', 'retry']);
  });

  it.each(cases.map((t) => [t.action, t.inputPath, t.expectedOutputPath] as const))(
    '%s on %s gives %s',
    (action, inputPath, expectedPath) => {
      const input = readYaml(path.join(ACTIONS, inputPath));
      const patches = rolloutActionPatch(OURS[action] as RolloutActionName, unparsed(input));
      const afterStatus = applyMergePatch(input, patches.status ?? {});
      const after = applyMergePatch(afterStatus, patches.spec ?? {});
      expect(withoutNulls(after)).toEqual(withoutNulls(readYaml(path.join(ACTIONS, expectedPath))));
    },
  );

  it('sends status changes and spec changes as separate patches (two endpoints)', () => {
    const patches = rolloutActionPatch(
      'resume',
      unparsed({
        spec: { paused: true },
        status: { pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-08-20T09:13:11Z' }] },
      }),
    );
    expect(patches).toEqual({ status: { status: { pauseConditions: null } }, spec: { spec: { paused: false } } });
    expect(rolloutActionPatch('resume', payload('healthy'))).toEqual({});
    expect(rolloutActionPatch('abort', payload('paused'))).toEqual({ status: { status: { abort: true } } });
    expect(rolloutActionPatch('promoteFull', payload('paused'))).toEqual({ status: { status: { promoteFull: true } } });
  });
});

