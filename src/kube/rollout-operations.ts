/**
 * Approve, abort and retry a Rollout, each exactly as the tools people know do it (docs/actions.md:
 * kubectl argo rollouts and Argo CD's resource actions) and each guarded: the Rollout is re-read first, the action is
 * refused unless the Rollout is in the state the button was shown for, and the write carries the
 * resourceVersion that was read, so a change in between is a conflict, never a skipped step.
 */
import { rolloutSchema, type Rollout } from '../model/rollout.js';
import { deriveRolloutState, rolloutActionPatch, type RolloutState } from '../model/rollout-state.js';
import type { KubeApi } from './api.js';
import { KubeActionError, where, type KubeCall } from './errors.js';
import { getRollout } from './reads.js';
import { done, refused, type Refusable } from './refusal.js';
import { ROLLOUTS } from './resources.js';
import { parseObject } from './parse-object.js';

/** What the Approve button was rendered for. */
export interface ExpectedCanaryStep {
  generation: number;
  podHash: string;
  /** 0-based `status.currentStepIndex`. */
  stepIndex: number;
  /**
   * Where the person saw this step, for the refusal when the Rollout moved on: "the button was
   * shown" (the default, a click) or, for a typed command, "the release thread showed step 1".
   */
  seen?: string;
}

export interface RolloutActionResult {
  cluster: string;
  namespace: string;
  name: string;
  before: RolloutState;
  after: RolloutState;
  /** The merge patches sent, in order, for the audit. */
  patches: { subresource?: 'status'; body: unknown }[];
}

/** Why a Rollout action was refused, and the state it was judged on (for the audit). */
export interface RolloutRefusal {
  why:
    | 'not-observed'
    /** The Rollout moved on from what the button was shown for. */
    | 'changed'
    | 'not-paused'
    /** The pause condition was cleared but spec.paused stays true: the Rollout is still paused by spec. */
    | 'left-paused-by-spec'
    /** Argo CD would not offer this action now (abort when fully promoted or aborted, retry when not aborted). */
    | 'not-offered';
  before?: RolloutState;
}

export type RolloutActionOutcome = Refusable<RolloutActionResult, RolloutRefusal>;

function stepText(index: number | undefined): string {
  return index === undefined ? 'no step' : `step ${index + 1}`;
}

/** What moved between what a person saw and what the cluster now holds, in their words. */
export function describeRolloutChange(name: string, expected: ExpectedCanaryStep, now: Rollout, state: RolloutState): string | undefined {
  if (state.podHash !== undefined && state.podHash !== expected.podHash) {
    return `${name} is now rolling out a different version (pod hash ${expected.podHash} → ${state.podHash})`;
  }
  const index = state.step?.index;
  if (index !== expected.stepIndex) return `${name} moved from ${stepText(expected.stepIndex)} to ${stepText(index)}`;
  if (now.metadata.generation !== expected.generation) {
    return `${name}'s spec changed (generation ${expected.generation} → ${now.metadata.generation})`;
  }
  return undefined;
}

async function explainConflict(api: KubeApi, ns: string, name: string, expected: ExpectedCanaryStep | undefined, call: KubeCall, cause: unknown): Promise<KubeActionError> {
  let what: string | undefined;
  try {
    const now = await getRollout(api, ns, name);
    const state = deriveRolloutState(now);
    if (expected) what = describeRolloutChange(name, expected, now, state);
    if (!what && state.aborted) what = `${name} was aborted`;
    if (!what && expected && !state.pause) what = `${name} was resumed by someone else (now ${state.phase})`;
  } catch {
    // The conflict itself is the news; the re-read is only for a better sentence.
  }
  const message = `${what ?? `${name} changed in ${where(call)}`} while you clicked; nothing was changed`;
  return new KubeActionError('conflict', message, call, 409, undefined, { cause });
}

/**
 * `kubectl argo rollouts promote` (not --full) for the step a person approved: clears
 * status.pauseConditions on the status subresource, then spec.paused=false when it is set.
 */
export async function approveCanaryStep(api: KubeApi, ns: string, name: string, expected: ExpectedCanaryStep): Promise<RolloutActionOutcome> {
  const call: KubeCall = { cluster: api.cluster, verb: 'patch', resource: 'rollouts/status', namespace: ns, name };
  const rollout = await getRollout(api, ns, name);
  const before = deriveRolloutState(rollout);
  if (!before.observed) {
    return refused(`${name}'s controller has not yet observed generation ${rollout.metadata.generation}; nothing was changed: try again when it has`, call, { why: 'not-observed' });
  }
  const change = describeRolloutChange(name, expected, rollout, before);
  if (change) return refused(`${change} since ${expected.seen ?? 'the button was shown'}; nothing was changed`, call, { why: 'changed', before });
  if ((rollout.status?.pauseConditions ?? []).length === 0) {
    const why = before.aborted ? 'it was aborted' : `it is ${before.phase}${before.message ? ` (${before.message})` : ''}`;
    return refused(`${name} is not paused at ${stepText(expected.stepIndex)}: ${why}; nothing was changed`, call, { why: 'not-paused', before });
  }
  const planned = rolloutActionPatch('resume', rollout);
  const patches: RolloutActionResult['patches'] = [];
  let latest: unknown = rollout;
  let resourceVersion = rollout.metadata.resourceVersion;
  if (planned.status) {
    let body = { metadata: { resourceVersion }, ...planned.status };
    try {
      latest = await api.patchStatus(ROLLOUTS, ns, name, body);
    } catch (err) {
      if (!(err instanceof KubeActionError) || err.kind !== 'conflict') throw err;
      // A write that changed nothing the person approved (a condition's timestamp) also bumps the
      // version: read again and, when it is still the same step, still paused, write once more.
      const now = await getRollout(api, ns, name);
      const again = rolloutActionPatch('resume', now).status;
      if (describeRolloutChange(name, expected, now, deriveRolloutState(now)) || (now.status?.pauseConditions ?? []).length === 0 || !again) throw await explainConflict(api, ns, name, expected, call, err);
      body = { metadata: { resourceVersion: now.metadata.resourceVersion }, ...again };
      try {
        latest = await api.patchStatus(ROLLOUTS, ns, name, body);
      } catch (second) {
        if (second instanceof KubeActionError && second.kind === 'conflict') throw await explainConflict(api, ns, name, expected, call, second);
        throw second;
      }
    }
    patches.push({ subresource: 'status', body });
    resourceVersion = parseObject(rolloutSchema, latest, call).metadata.resourceVersion;
  }
  if (planned.spec) {
    const specCall: KubeCall = { ...call, resource: 'rollouts' };
    const write = async (rv: string): Promise<void> => {
      const body = { metadata: { resourceVersion: rv }, ...planned.spec };
      latest = await api.patch(ROLLOUTS, ns, name, body);
      patches.push({ body });
    };
    const leftPaused = (why: string): string =>
      patches.length === 0 ? why : `${name}: the pause was cleared, but spec.paused=false could not be written (${why}); the Rollout stays paused by spec until someone unpauses it`;
    let movedOn = false;
    try {
      try {
        await write(resourceVersion);
      } catch (err) {
        if (!(err instanceof KubeActionError) || err.kind !== 'conflict') throw err;
        // The controller reacts to the cleared pause condition at once, so the version read back
        // is often already stale. Write again only if it is still the same version, still paused by spec.
        const now = await getRollout(api, ns, name);
        if (now.status?.currentPodHash !== expected.podHash) movedOn = true;
        else if (now.spec?.paused === true) await write(now.metadata.resourceVersion);
        else latest = now;
      }
    } catch (err) {
      if (!(err instanceof KubeActionError) || patches.length === 0) throw err;
      // The pause condition is already cleared; say exactly what is left undone.
      throw new KubeActionError(err.kind, leftPaused(err.message), err.call, err.status, undefined, { cause: err });
    }
    if (movedOn) return refused(leftPaused(`${name} started rolling out a different version in the meantime`), specCall, { why: 'left-paused-by-spec' });
  }
  const after = deriveRolloutState(parseObject(rolloutSchema, latest, call));
  return done({ cluster: api.cluster, namespace: ns, name, before, after, patches });
}

/** Conflicts a status action rides out: the controller writes a busy Rollout's status many times a second. */
const STATUS_ACTION_ATTEMPTS = 3;

async function statusAction(api: KubeApi, ns: string, name: string, action: 'abort' | 'retry', expectedPodHash?: string): Promise<RolloutActionOutcome> {
  const call: KubeCall = { cluster: api.cluster, verb: 'patch', resource: 'rollouts/status', namespace: ns, name };
  let rollout = await getRollout(api, ns, name);
  const before = deriveRolloutState(rollout);
  let now = before;
  for (let attempt = 1; ; attempt++) {
    if (expectedPodHash !== undefined && now.podHash !== expectedPodHash) {
      return refused(`${name} is now rolling out a different version (pod hash ${expectedPodHash} → ${now.podHash ?? 'none'}) since the button was shown; nothing was changed`, call, { why: 'changed', before: now });
    }
    // The same rule as Argo CD's action discovery: abort while not fully promoted and not aborted; retry once aborted.
    if (!now.actions[action]) {
      const why = now.fullyPromoted ? 'it is fully promoted: there is nothing to ' + action : action === 'abort' ? 'it is already aborted' : 'it is not aborted';
      return refused(`${name} cannot be ${action === 'abort' ? 'aborted' : 'retried'}: ${why}; nothing was changed`, call, { why: 'not-offered', before: now });
    }
    const planned = rolloutActionPatch(action, rollout);
    // Retry writes abort=false (what `kubectl argo rollouts retry` sends); Argo CD's null is equivalent.
    const statusPatch = action === 'retry' ? { status: { abort: false } } : planned.status!;
    const body = { metadata: { resourceVersion: rollout.metadata.resourceVersion }, ...statusPatch };
    try {
      const latest = await api.patchStatus(ROLLOUTS, ns, name, body);
      const after = deriveRolloutState(parseObject(rolloutSchema, latest, call));
      return done({ cluster: api.cluster, namespace: ns, name, before, after, patches: [{ subresource: 'status', body }] });
    } catch (err) {
      if (!(err instanceof KubeActionError) || err.kind !== 'conflict') throw err;
      // The controller wrote the status in between (a failing canary's does, constantly): an abort
      // must not lose to that. Read again and judge afresh: the version and the offer still decide.
      if (attempt >= STATUS_ACTION_ATTEMPTS) throw await explainConflict(api, ns, name, undefined, call, err);
      rollout = await getRollout(api, ns, name);
      now = deriveRolloutState(rollout);
    }
  }
}

/** `status.abort=true` on the status subresource. */
export function abortRollout(api: KubeApi, ns: string, name: string, expected?: { podHash: string }): Promise<RolloutActionOutcome> {
  return statusAction(api, ns, name, 'abort', expected?.podHash);
}

/** `status.abort=false` on the status subresource: the Rollout starts again from step 1. */
export function retryRollout(api: KubeApi, ns: string, name: string, expected?: { podHash: string }): Promise<RolloutActionOutcome> {
  return statusAction(api, ns, name, 'retry', expected?.podHash);
}
