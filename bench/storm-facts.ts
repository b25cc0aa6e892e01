/**
 * The 20 notifications one Rollout sends during a canary release, shaped like the Rollouts
 * notification webhook body: progress, one pause that waits for approval, the remaining steps,
 * healthy, a scale, and heartbeats (the same state sent again) in between.
 */
import { configFileSchema, type ConfigFile } from '../src/config/file.js';
const STEPS = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 40 },
  { setWeight: 60 },
  { analysis: { templates: [{ templateName: 'success-rate' }] } },
  { setWeight: 80 },
  { setWeight: 100 },
];

const OLD = '6d9b8c7f5a';
const NEW = '7c9d6b5f48';

/** [phase, step index, generation offset, rv offset] per fact; a repeated rv is a heartbeat. */
const TIMELINE: ['Progressing' | 'Paused' | 'Healthy', number, number, number][] = [
  ['Progressing', 0, 0, 0],
  ['Progressing', 0, 0, 0],
  ['Progressing', 0, 0, 0],
  ['Paused', 1, 0, 1],
  ['Paused', 1, 0, 1],
  ['Paused', 1, 0, 1],
  ['Paused', 1, 0, 1],
  ['Progressing', 2, 0, 2],
  ['Progressing', 2, 0, 2],
  ['Progressing', 3, 0, 3],
  ['Progressing', 3, 0, 3],
  ['Progressing', 4, 0, 4],
  ['Progressing', 4, 0, 4],
  ['Progressing', 5, 0, 5],
  ['Progressing', 6, 0, 6],
  ['Healthy', 7, 0, 7],
  ['Healthy', 7, 0, 7],
  ['Healthy', 7, 0, 7],
  ['Healthy', 7, 1, 8],
  ['Healthy', 7, 1, 8],
];

/** The storm's pipelines: `svc-<r>` with stages `s0`…, each selecting its Rollouts by label (shared by bench:storm and bench:faults). */
export function stormConfig(releases: number, stages: number): ConfigFile {
  return configFileSchema.parse({
    // No kubeconfig in a bench: optional, so start-up goes on without one.
    clusters: [{ name: 'prod', kubeconfigContext: 'prod', optional: true }],
    pipelines: Array.from({ length: releases }, (_, r) => ({
      name: `svc-${r}`,
      channel: `C0SVC${r}`,
      stages: Array.from({ length: stages }, (_, k) => ({
        name: `s${k}`,
        cluster: 'prod',
        rollouts: { namespace: `svc-${r}`, selector: `app.kubernetes.io/part-of=svc-${r},env=s${k}` },
      })),
    })),
  });
}

export function stormRolloutBody(at: { release: number; stage: number; rollout: number; index: number }): { body: unknown; approval: boolean } {
  const [phase, step, genOffset, rvOffset] = TIMELINE[at.index]!;
  const name = `svc-${at.release}-s${at.stage}-${at.rollout}`;
  const healthy = phase === 'Healthy';
  const body = {
    event: phase === 'Paused' ? 'on-rollout-paused' : healthy ? 'on-rollout-completed' : 'on-rollout-updated',
    sentAt: 1_790_000_000 + at.index,
    rollout: {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: {
        namespace: `svc-${at.release}`,
        name,
        uid: `uid-${name}`,
        generation: 5 + genOffset,
        resourceVersion: String(1000 + rvOffset),
        labels: { 'app.kubernetes.io/part-of': `svc-${at.release}`, env: `s${at.stage}` },
        annotations: { 'hangar.io/release-id': `rel-${at.release}` },
      },
      spec: {
        replicas: genOffset > 0 ? 8 : 5,
        strategy: { canary: { steps: STEPS } },
        template: { spec: { containers: [{ name: 'app', image: `registry.example.com/svc-${at.release}:2.0.0` }] } },
      },
      status: {
        observedGeneration: String(5 + genOffset),
        currentPodHash: NEW,
        stableRS: healthy ? NEW : OLD,
        currentStepIndex: step,
        phase,
        ...(phase === 'Paused'
          ? { message: 'CanaryPauseStep', pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-11-29T12:00:00Z' }], controllerPause: true }
          : healthy
            ? {}
            : { message: 'more replicas need to be updated' }),
        replicas: genOffset > 0 ? 8 : 5,
        updatedReplicas: 5,
        readyReplicas: 5,
        availableReplicas: 5,
        canary: {},
      },
    },
  };
  return { body, approval: phase === 'Paused' && at.index === 3 };
}
